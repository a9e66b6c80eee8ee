"""One head's computation, stage by stage (projections, scores, masks, softmax), and the settings a user chooses."""
