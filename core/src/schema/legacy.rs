//! Additions of the legacy 2025-11-25 era (`initialize`, `InitializeRequestParams`,
//! `InitializeResult`, `ping`, `logging/setLevel`, `resources/subscribe`, ...).
//!
//! Reserved: these types are not defined yet. They will live here, beside the 2026-07-28
//! types of the parent module, which they reuse where the two revisions agree.
