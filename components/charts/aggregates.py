"""How the heads of a layer are summed into one map, by name, with the words a reader sees (no altair, no torch):
the page's control and link parser read them, and the all-heads chart titles its summary with them."""

AGGREGATES = {"mean": "mean of the heads", "max": "max of the heads", "rollout": "rollout up to this layer"}
