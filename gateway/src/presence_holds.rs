//! The bookkeeping behind this node's presence holds (`iris_shared::presence`): the id of
//! each device's hold, and which releases must wait for a hold still on its way to Redis.
//!
//! A hold and a release of the same device go out on different pooled connections, so
//! they could land in either order. Two rules keep the outcome right whatever the order:
//! every hold gets a higher id than any before it, and a release removes only a hold with an
//! id up to its own (a newer hold stays); and a release is not sent while a hold of the same
//! device is still in flight (it would land first and leave that hold behind), but once the
//! hold's write has ended.

use std::collections::HashMap;

/// One device of one account on this node.
pub type DeviceKey = (String, String);

#[derive(Debug)]
struct DeviceHold {
    /// The id of the newest hold written (or being written) for the device.
    id: u64,
    /// Hold writes of the device not yet answered.
    in_flight: u32,
    /// The device's last session left while a hold was in flight.
    release_waiting: bool,
}

/// Hold ids and in-flight writes of every device with a hold of this node.
#[derive(Debug, Default)]
pub struct PresenceHolds {
    devices: HashMap<DeviceKey, DeviceHold>,
    last_id: u64,
}

impl PresenceHolds {
    /// A new hold id: `now_ms`, or later than every id handed out before. (Ids are times,
    /// so a node that restarts under the same id holds with higher ids than before.)
    fn next_id(&mut self, now_ms: u64) -> u64 {
        self.last_id = now_ms.max(self.last_id + 1);
        self.last_id
    }

    /// A hold of `device` is about to be written: its id.
    pub fn begin_hold(&mut self, device: DeviceKey, now_ms: u64) -> u64 {
        let id = self.next_id(now_ms);
        let hold = self.devices.entry(device).or_insert(DeviceHold {
            id,
            in_flight: 0,
            release_waiting: false,
        });
        hold.id = id;
        hold.in_flight += 1;
        hold.release_waiting = false;
        id
    }

    /// Every device held is about to be held again (after Redis came back, or after this
    /// node's liveness lapsed): the devices and the one id they are written with.
    pub fn begin_hold_all(&mut self, now_ms: u64) -> (Vec<DeviceKey>, u64) {
        let id = self.next_id(now_ms);
        let mut devices = Vec::with_capacity(self.devices.len());
        for (device, hold) in &mut self.devices {
            if hold.release_waiting {
                continue; // its release goes out once the writes in flight end
            }
            hold.id = id;
            hold.in_flight += 1;
            devices.push(device.clone());
        }
        (devices, id)
    }

    /// A hold write of `device` ended (written or failed): the release to send now, if its
    /// last session left meanwhile and no other hold write is in flight.
    pub fn hold_ended(&mut self, device: &DeviceKey) -> Option<u64> {
        let hold = self.devices.get_mut(device)?;
        hold.in_flight = hold.in_flight.saturating_sub(1);
        if hold.in_flight == 0 && hold.release_waiting {
            return self.devices.remove(device).map(|hold| hold.id);
        }
        None
    }

    /// The last session of `device` on this node left: the hold id to release now, or
    /// `None` when there is nothing to release yet (a hold write is in flight; its end
    /// returns the release) or at all.
    pub fn release(&mut self, device: DeviceKey) -> Option<u64> {
        let hold = self.devices.get_mut(&device)?;
        if hold.in_flight > 0 {
            hold.release_waiting = true;
            return None;
        }
        self.devices.remove(&device).map(|hold| hold.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phone() -> DeviceKey {
        ("alice".to_owned(), "phone".to_owned())
    }

    #[test]
    fn every_hold_gets_a_higher_id_even_within_one_millisecond() {
        let mut holds = PresenceHolds::default();
        let first = holds.begin_hold(phone(), 1_000);
        let second = holds.begin_hold(("bob".to_owned(), "tablet".to_owned()), 1_000);
        let (_, third) = holds.begin_hold_all(999);
        assert!(first < second && second < third);
    }

    #[test]
    fn a_release_waits_for_the_hold_in_flight_and_then_removes_it() {
        let mut holds = PresenceHolds::default();
        let id = holds.begin_hold(phone(), 1_000);
        assert_eq!(holds.release(phone()), None);
        assert_eq!(holds.hold_ended(&phone()), Some(id));
        assert_eq!(holds.release(phone()), None, "nothing is held any more");
    }

    #[test]
    fn a_device_back_before_its_release_went_out_keeps_its_hold() {
        let mut holds = PresenceHolds::default();
        holds.begin_hold(phone(), 1_000);
        assert_eq!(holds.release(phone()), None);
        holds.begin_hold(phone(), 1_001);
        assert_eq!(holds.hold_ended(&phone()), None);
        assert_eq!(holds.hold_ended(&phone()), None);
        assert_eq!(holds.release(phone()), Some(1_001));
    }

    #[test]
    fn holding_all_again_skips_devices_waiting_for_their_release() {
        let mut holds = PresenceHolds::default();
        holds.begin_hold(phone(), 1_000);
        holds.hold_ended(&phone());
        let tablet = ("alice".to_owned(), "tablet".to_owned());
        holds.begin_hold(tablet.clone(), 1_000);
        holds.release(tablet.clone());
        let (devices, id) = holds.begin_hold_all(2_000);
        assert_eq!(devices, [phone()]);
        assert_eq!(id, 2_000);
        assert_eq!(holds.hold_ended(&tablet), Some(1_001));
        assert_eq!(holds.release(phone()), None);
        assert_eq!(holds.hold_ended(&phone()), Some(2_000));
    }
}
