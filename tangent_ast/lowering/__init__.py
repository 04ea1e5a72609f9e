"""TODO"""

from .walk import Normalizer

__all__ = ["Normalizer"]
