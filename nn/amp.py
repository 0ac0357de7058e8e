"""Mixed precision under nn (PyTorch's torch.amp names): autocast regions (tensor/amp.py) and
the GradScaler (tensor/grad_scaler.py), the same objects as tensor.autocast and
tensor.GradScaler."""
from tensor.amp import autocast
from tensor.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]
