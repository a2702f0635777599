//! [`metric_set!`](crate::metric_set): declares a binary's metrics as one struct, with its
//! Prometheus rendering and its OpenTelemetry registration generated from one list.

/// Declares `pub struct $name` whose fields are metrics named `<prefix><field>`:
///
/// ```text
/// iris_shared::metric_set! {
///     /// The gateway's metrics.
///     pub struct Metrics("iris_gateway_") {
///         connections: gauge = "Open WebSocket connections.",
///         frames_sent_total: labeled("type") = "Frames sent to devices.",
///         delivery_latency_seconds: histogram(LATENCY_BUCKETS) = "Worker emit to socket write.",
///     }
/// }
/// ```
///
/// Kinds: `counter` (`AtomicU64`), `gauge` (`AtomicI64`), `labeled("label")`
/// ([`LabeledCounter`](crate::metrics::LabeledCounter)), `histogram(BUCKETS)`
/// ([`Histogram`](crate::metrics::Histogram), seconds). The page and the meter also get the
/// standard `process_*` series ([`process`](crate::metrics::process)) and `iris_build_info`
/// ([`build_info`](crate::metrics::build_info)).
#[macro_export]
macro_rules! metric_set {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($prefix:literal) {
            $( $field:ident : $kind:ident $( ( $arg:expr ) )? = $help:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name {
            $( #[doc = $help] pub $field: $crate::metric_set!(@type $kind), )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $crate::metric_set!(@new $kind $( ($arg) )?), )* }
            }
        }

        impl $name {
            /// Prometheus text exposition of every series.
            pub fn render(&self) -> String {
                let mut out = String::new();
                $(
                    $crate::metric_set!(@render out, self.$field, concat!($prefix, stringify!($field)), $help, $kind);
                )*
                $crate::metrics::process::render(&mut out);
                $crate::metrics::build_info::render(&mut out);
                out
            }

            /// Reports every series through `meter` too (by OTLP when it exports); counters
            /// and gauges are read when the meter collects, histograms record as they go.
            pub fn register(self: &std::sync::Arc<Self>, meter: &$crate::metrics::opentelemetry::metrics::Meter) {
                $(
                    $crate::metric_set!(@register self, meter, $field, concat!($prefix, stringify!($field)), $help, $kind);
                )*
                $crate::metrics::process::register(meter);
                $crate::metrics::build_info::register(meter);
            }
        }
    };

    (@type counter) => { std::sync::atomic::AtomicU64 };
    (@type gauge) => { std::sync::atomic::AtomicI64 };
    (@type labeled) => { $crate::metrics::LabeledCounter };
    (@type histogram) => { $crate::metrics::Histogram };

    (@new counter) => { std::sync::atomic::AtomicU64::new(0) };
    (@new gauge) => { std::sync::atomic::AtomicI64::new(0) };
    (@new labeled ($label:expr)) => { $crate::metrics::LabeledCounter::new($label) };
    (@new histogram ($buckets:expr)) => { $crate::metrics::Histogram::new($buckets) };

    (@render $out:ident, $value:expr, $series:expr, $help:literal, counter) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, "# HELP {} {}\n# TYPE {} counter\n{} {}", $series, $help, $series, $series,
            $value.load(std::sync::atomic::Ordering::Relaxed));
    }};
    (@render $out:ident, $value:expr, $series:expr, $help:literal, gauge) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, "# HELP {} {}\n# TYPE {} gauge\n{} {}", $series, $help, $series, $series,
            $value.load(std::sync::atomic::Ordering::Relaxed));
    }};
    (@render $out:ident, $value:expr, $series:expr, $help:literal, labeled) => {
        $value.render(&mut $out, $series, $help)
    };
    (@render $out:ident, $value:expr, $series:expr, $help:literal, histogram) => {
        $value.render(&mut $out, $series, $help)
    };

    (@register $set:ident, $meter:ident, $field:ident, $series:expr, $help:literal, counter) => {{
        let set = std::sync::Arc::clone($set);
        $meter
            .u64_observable_counter($series)
            .with_description($help)
            .with_callback(move |observer| {
                observer.observe(set.$field.load(std::sync::atomic::Ordering::Relaxed), &[])
            })
            .build();
    }};
    (@register $set:ident, $meter:ident, $field:ident, $series:expr, $help:literal, gauge) => {{
        let set = std::sync::Arc::clone($set);
        $meter
            .i64_observable_gauge($series)
            .with_description($help)
            .with_callback(move |observer| {
                observer.observe(set.$field.load(std::sync::atomic::Ordering::Relaxed), &[])
            })
            .build();
    }};
    (@register $set:ident, $meter:ident, $field:ident, $series:expr, $help:literal, labeled) => {{
        let set = std::sync::Arc::clone($set);
        let label = set.$field.label();
        $meter
            .u64_observable_counter($series)
            .with_description($help)
            .with_callback(move |observer| {
                for (value, count) in set.$field.snapshot() {
                    observer.observe(count, &[$crate::metrics::opentelemetry::KeyValue::new(label, value)]);
                }
            })
            .build();
    }};
    (@register $set:ident, $meter:ident, $field:ident, $series:expr, $help:literal, histogram) => {
        $set.$field.record_through($meter, $series, $help)
    };
}
