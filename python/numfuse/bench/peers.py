"""The libraries numfuse is compared with: loading, versions and thread counts.

A peer that is not installed (or fails to import) is skipped with a note,
never an error. NumPy and SciPy run these functions on one thread; numfuse,
numexpr, torch and Numba are set to the same thread count. JAX (``jax.jit`` on
the CPU, float64 enabled with ``jax_enable_x64``) runs on XLA's own CPU thread
pool, which XLA sizes from the machine's cores and offers no call to change once
running: its count is reported as the machine's usable cores. The compilers are
optional (``pip install numfuse[bench-compilers]``).
"""

from __future__ import annotations

import importlib

ALL_PEERS = ("numfuse", "numpy", "numexpr", "torch", "scipy", "jax", "numba")
THREADED = ("numfuse", "numexpr", "torch", "numba")


class Peer:
    def __init__(self, name: str, module, note: str = ""):
        self.name = name
        self.module = module
        self.note = note

    @property
    def available(self) -> bool:
        return self.module is not None

    @property
    def version(self):
        return getattr(self.module, "__version__", None) if self.module is not None else None

    def describe(self) -> dict:
        return {"available": self.available, "version": self.version, "note": self.note}


def _import(name: str):
    try:
        if name == "scipy":
            module = importlib.import_module("scipy")
            importlib.import_module("scipy.special")  # makes module.special available
            return module, ""
        if name == "jax":
            module = importlib.import_module("jax")
            module.config.update("jax_enable_x64", True)  # float64 inputs stay float64
            importlib.import_module("jax.numpy")  # makes module.numpy, .scipy.special,
            importlib.import_module("jax.scipy.special")  # .nn available
            importlib.import_module("jax.nn")
            return module, ""
        return importlib.import_module(name), ""
    except Exception as error:  # not installed, or broken: skip with a note
        reason = (
            "not installed"
            if isinstance(error, ModuleNotFoundError)
            else f"failed to import ({type(error).__name__}: {error})"
        )
        return None, reason


def load(names=None) -> dict:
    """Peer objects for `names` (default: all); numfuse is always included, first."""
    wanted = list(ALL_PEERS if names is None else names)
    for name in wanted:
        if name not in ALL_PEERS:
            raise KeyError(f"unknown peer {name!r}; choose from {', '.join(ALL_PEERS[1:])}")
    if "numfuse" not in wanted:
        wanted.insert(0, "numfuse")
    peers = {}
    for name in ALL_PEERS:
        if name not in wanted:
            continue
        module, note = _import(name)
        if module is None and name in ("numfuse", "numpy"):
            raise ImportError(f"numfuse.bench needs {name}: {note}")
        peers[name] = Peer(name, module, note)
    return peers


def set_threads(peers: dict, threads: int):
    """Give numfuse, numexpr and torch `threads` threads; returns a function that
    restores the settings they had (numfuse's automatic rule included)."""
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    nf = peers["numfuse"].module
    setting = getattr(nf._core, "_num_threads_setting", nf.get_num_threads)()
    restores = [lambda: nf.set_num_threads(setting)]
    nf.set_num_threads(threads)
    if "numexpr" in peers and peers["numexpr"].available:
        ne = peers["numexpr"].module
        previous_ne = ne.set_num_threads(threads)
        restores.append(lambda: ne.set_num_threads(previous_ne))
    if "torch" in peers and peers["torch"].available:
        torch = peers["torch"].module
        previous_torch = torch.get_num_threads()
        torch.set_num_threads(threads)
        restores.append(lambda: torch.set_num_threads(previous_torch))
    if "numba" in peers and peers["numba"].available:
        numba = peers["numba"].module
        previous_numba = numba.get_num_threads()
        # Numba's pool is fixed at NUMBA_NUM_THREADS (default: the machine's cores).
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        restores.append(lambda: numba.set_num_threads(previous_numba))

    def restore():
        for undo in restores:
            undo()

    return restore


def thread_counts(peers: dict) -> dict:
    """Threads each peer will use, as the peer itself reports them."""
    counts = {"numfuse": peers["numfuse"].module.get_num_threads()}
    if "numexpr" in peers and peers["numexpr"].available:
        ne = peers["numexpr"].module
        counts["numexpr"] = ne.get_num_threads() if hasattr(ne, "get_num_threads") else None
    if "torch" in peers and peers["torch"].available:
        counts["torch"] = peers["torch"].module.get_num_threads()
    if "numba" in peers and peers["numba"].available:
        counts["numba"] = peers["numba"].module.get_num_threads()
    if "jax" in peers and peers["jax"].available:
        from .machine import usable_cores

        counts["jax"] = usable_cores()  # XLA's CPU pool, sized from the machine
    for name in ("numpy", "scipy"):
        if name in peers and peers[name].available:
            counts[name] = 1  # element-wise ufuncs and scipy.special run on the calling thread
    return counts


def library_versions(peers: dict) -> dict:
    """Versions of every library involved (peers, and the tools of the report)."""
    import platform

    versions = {"python": platform.python_version()}
    for name, peer in peers.items():
        versions[name] = peer.version if peer.available else None
    for name in ("rich", "matplotlib", "mpmath"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:
            versions[name] = None
    return versions
