"""A trace of named steps and its outline, all heads of a layer, what heads move, and the proof against transformers."""
