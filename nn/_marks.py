"""Marks on tensors by identity, which nn keeps outside the Tensor type: a Parameter, an
nn.Buffer's persistence, a lazy module's uninitialised placeholder. A tensor cannot be a subclass
here (autograd records only `type(x) is Tensor` inputs), so each kind of mark is a TensorMarks:
id(t) -> (weak reference, value), an entry dropped when its tensor dies (so a new tensor that
reuses the id is not taken for the old one)."""
from __future__ import annotations

import weakref
from typing import Any


class TensorMarks(dict):
    def mark(self, t, value: Any = True):
        """Mark t with value (replacing a mark it had); returns t."""
        key = id(t)

        def forget(ref) -> None:
            e = self.get(key)
            if e is not None and e[0] is ref:
                del self[key]
        self[key] = (weakref.ref(t, forget), value)
        return t

    def value(self, t, default: Any = None) -> Any:
        """t's mark, or default when t has none."""
        e = self.get(id(t))
        return default if e is None or e[0]() is not t else e[1]

    def unmark(self, t) -> None:
        if self.value(t) is not None:
            del self[id(t)]
