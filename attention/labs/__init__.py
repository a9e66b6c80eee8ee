"""Toy models trained on the CPU in seconds (counting letters, induction heads) and the scaling lab's numbers."""
