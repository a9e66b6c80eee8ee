"""The model families behind one seam, finding and loading a checkpoint, its tokenizer and language-model head."""
