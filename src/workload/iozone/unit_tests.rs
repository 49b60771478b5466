//! Unit tests of the IOzone engine.
