"""Interventions: switching heads off and measuring what the model's guess or its sentence embedding loses."""
