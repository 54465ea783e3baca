"""The shared build cache's integrity record (see :mod:`kernelwright.tools.backends.cache_record`,
where it lives so that trusted in-process loaders can check a binary before loading it)."""

from kernelwright.tools.backends.cache_record import BuildCache, record_path, trusted_file

__all__ = ["BuildCache", "record_path", "trusted_file"]
