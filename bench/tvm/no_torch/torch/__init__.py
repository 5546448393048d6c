"""Hides Debian's torch from the TVM peer's processes (subgraphs.import_tvm puts this folder first
on PYTHONPATH, so MetaSchedule's builder and runner workers inherit it): when torch imports,
tvm.relax tries to compile a C++ torch dlpack extension on every import, and fails."""
raise ImportError("torch is hidden from the TVM benchmark peer (bench/tvm/no_torch)")
