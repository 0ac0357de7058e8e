# ruff: noqa: I001  (rules register on import, before the hook is installed)
"""autograd: reverse- and forward-mode differentiation of tensor programs.

>>> import tensor as T, autograd
>>> x = T.tensor([0.5, 2.0], requires_grad=True)
>>> y = (T.exp(x) * x).sum()
>>> (g,) = autograd.grad(y, x)
>>> [round(v, 4) for v in g.tolist()]
[2.4731, 22.1672]
"""
from . import (  # noqa: F401
               hooks,  # noqa: F401
               rules_dist,
               rules_elementwise,
               rules_index,
               rules_la,
               rules_linalg,
               rules_manip,
               rules_fft,
               rules_misc,
               rules_reduce,  # (import = register the rules)
               rules_rowops,
               rules_segment,
               rules_sort,
               rules_sparse,
               rules_views,
)
from .engine import backward, grad
from .function import Function, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .graph import RULES, install

install()

__all__ = ["backward", "grad", "Function", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "RULES"]
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402

__all__ += ["gradcheck", "gradgradcheck", "GradcheckError"]
from .checkpoint import checkpoint, checkpoint_sequential  # noqa: E402
from .forward import jvp, vjp  # noqa: E402
from . import forward_ad  # noqa: E402
from . import saved_hooks  # noqa: E402
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks  # noqa: E402
from .functional import hessian, hvp, jacobian, vhp  # noqa: E402
from . import func, functional  # noqa: E402
from . import graph, graph_api  # noqa: E402
from .node_api import GradientEdge  # noqa: E402

# torch.autograd.graph's public names, where PyTorch has them (graph.py itself cannot import
# the modules that build on it)
for _name, _obj in (("GradientEdge", GradientEdge), ("saved_tensors_hooks", saved_tensors_hooks),
                    ("save_on_cpu", save_on_cpu),
                    ("disable_saved_tensors_hooks", disable_saved_tensors_hooks),
                    ("get_gradient_edge", graph_api.get_gradient_edge),
                    ("increment_version", graph_api.increment_version),
                    ("register_multi_grad_hook", graph_api.register_multi_grad_hook)):
    setattr(graph, _name, _obj)
del _name, _obj
from .anomaly import (  # noqa: E402
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)

__all__ += ["jvp", "vjp", "jacobian", "hessian", "hvp", "vhp", "checkpoint", "checkpoint_sequential",
            "func", "functional", "forward_ad", "saved_hooks", "saved_tensors_hooks", "save_on_cpu",
            "disable_saved_tensors_hooks", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
            "is_anomaly_check_nan_enabled", "graph"]
