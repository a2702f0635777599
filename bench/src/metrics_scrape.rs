//! Reading a node's Prometheus `/metrics` page: single series (resident memory, CPU
//! seconds, gauges) and histogram buckets, whose difference between two scrapes gives the
//! quantiles of what the node observed in between.

use anyhow::{Context, Result};

/// One scraped `/metrics` page.
#[derive(Debug, Clone, Default)]
pub struct MetricsPage {
    text: String,
}

impl MetricsPage {
    /// Fetches `<base>/metrics`.
    pub async fn fetch(http: &reqwest::Client, base: &str) -> Result<Self> {
        let url = format!("{base}/metrics");
        let text = http
            .get(&url)
            .send()
            .await
            .with_context(|| format!("GET {url}"))?
            .error_for_status()
            .with_context(|| format!("GET {url}"))?
            .text()
            .await?;
        Ok(Self { text })
    }

    /// A page from text already fetched (for tests of the parser).
    #[cfg(test)]
    pub fn from_text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
        }
    }

    /// The value of the series written exactly `series` (name and labels), if present.
    pub fn value(&self, series: &str) -> Option<f64> {
        self.text.lines().find_map(|line| {
            let rest = line.strip_prefix(series)?;
            let value = rest.strip_prefix(' ')?;
            value.split_whitespace().next()?.parse().ok()
        })
    }

    /// The cumulative buckets of histogram `name`: `(upper bound in seconds, count)`,
    /// ascending, `+Inf` as `f64::INFINITY`.
    pub fn buckets(&self, name: &str) -> Vec<(f64, f64)> {
        let prefix = format!("{name}_bucket{{");
        let mut buckets: Vec<(f64, f64)> = self
            .text
            .lines()
            .filter_map(|line| {
                let labels_and_value = line.strip_prefix(prefix.as_str())?;
                let (labels, value) = labels_and_value.split_once("} ")?;
                let bound = labels
                    .split(',')
                    .find_map(|label| label.trim().strip_prefix("le="))?
                    .trim_matches('"');
                let bound = if bound == "+Inf" {
                    f64::INFINITY
                } else {
                    bound.parse().ok()?
                };
                Some((bound, value.split_whitespace().next()?.parse().ok()?))
            })
            .collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        buckets
    }
}

/// The sum of two bucket lists with the same bounds (several nodes' histograms).
pub fn add_buckets(total: &mut Vec<(f64, f64)>, more: &[(f64, f64)]) {
    if total.is_empty() {
        total.extend_from_slice(more);
        return;
    }
    for (slot, (_, count)) in total.iter_mut().zip(more) {
        slot.1 += count;
    }
}

/// `after - before`, bucket by bucket (observations made between two scrapes).
pub fn bucket_delta(before: &[(f64, f64)], after: &[(f64, f64)]) -> Vec<(f64, f64)> {
    after
        .iter()
        .enumerate()
        .map(|(i, &(bound, count))| (bound, count - before.get(i).map_or(0.0, |b| b.1)))
        .collect()
}

/// Quantile `q` of cumulative `buckets`, in seconds: linear within the bucket that holds
/// it (the bucket's upper bound when it is the last, open one); `None` without data.
pub fn bucket_quantile(buckets: &[(f64, f64)], q: f64) -> Option<f64> {
    let total = buckets.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let mut lower_bound = 0.0;
    let mut lower_count = 0.0;
    for &(bound, count) in buckets {
        if count >= rank {
            if bound.is_infinite() {
                return Some(lower_bound);
            }
            let in_bucket = count - lower_count;
            let fraction = if in_bucket > 0.0 {
                (rank - lower_count) / in_bucket
            } else {
                1.0
            };
            return Some(lower_bound + (bound - lower_bound) * fraction);
        }
        lower_bound = bound;
        lower_count = count;
    }
    Some(lower_bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# TYPE process_cpu_seconds_total counter\n\
        process_cpu_seconds_total 12.5\n\
        process_resident_memory_bytes 1048576\n\
        lat_bucket{le=\"0.001\"} 10\n\
        lat_bucket{le=\"0.002\"} 90\n\
        lat_bucket{le=\"+Inf\"} 100\n\
        lat_sum 0.2\n";

    #[test]
    fn a_series_value_is_read_by_its_exact_name() {
        let page = MetricsPage::from_text(PAGE);
        assert_eq!(page.value("process_cpu_seconds_total"), Some(12.5));
        assert_eq!(page.value("process_cpu_seconds"), None);
    }

    #[test]
    fn quantiles_interpolate_inside_the_bucket_that_holds_them() {
        let page = MetricsPage::from_text(PAGE);
        let buckets = page.buckets("lat");
        assert_eq!(buckets.len(), 3);
        let p50 = bucket_quantile(&buckets, 0.5).unwrap();
        assert!((p50 - 0.0015).abs() < 1e-9, "{p50}");
        assert_eq!(bucket_quantile(&buckets, 0.99), Some(0.002));
        let none = bucket_delta(&buckets, &buckets);
        assert_eq!(bucket_quantile(&none, 0.5), None);
    }
}
