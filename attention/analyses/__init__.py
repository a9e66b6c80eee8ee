"""What heads do, in numbers: the atlas, head scores, sinks, two texts compared, the neuron view, the lesson's
claims."""
