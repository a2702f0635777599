//! Iris Cluster end-to-end test harness.
