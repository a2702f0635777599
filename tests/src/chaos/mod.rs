//! The chaos suite: devices that keep talking through faults ([`device`]), the faults
//! ([`faults`]), and the accounting of every outboxed frame against what each device
//! received ([`ledger`]).

pub mod device;
pub mod faults;
pub mod ledger;
