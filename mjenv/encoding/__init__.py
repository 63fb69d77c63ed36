"""What an agent sees: the versioned observation encodings (:mod:`mjenv.encoding.observation`).  The action layout
is the engine's (:mod:`mjenv.engine.actions`); :mod:`mjenv.encoding.actions` re-exports it."""
