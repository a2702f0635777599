//! Open pickers any device can answer: the record and its operations are
//! `iris_shared::pickers`; this names what the worker's modules use of it.

pub use iris_shared::pickers::{open, PickerKind};
