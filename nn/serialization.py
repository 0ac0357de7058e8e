"""nn.save / nn.load: the state-dict files of tensor/serialization.py (PyTorch's torch.save /
torch.load of a state_dict; `tensor.save(obj, f)` in PyTorch's argument order does the same)."""
from tensor.serialization import CheckpointError, load, save

__all__ = ["save", "load", "CheckpointError"]
