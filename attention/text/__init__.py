"""A text's tokens and hidden states, computed once; whole words, sentence pairs and unknown tokens."""
