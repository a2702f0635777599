//! OpenMetrics family names of a Prometheus page: a counter `x_total` is family `x`, a
//! histogram `x` also owns `x_bucket`, `x_sum` and `x_count`. Two families claiming one name
//! make an OpenMetrics scraper reject the page (or merge series), so each binary's tests hold
//! its page to [`clashes`] being empty.

use std::collections::BTreeMap;

/// The names one declared metric occupies: its family name and its series names.
fn names_of(name: &str, kind: &str) -> Vec<String> {
    match kind {
        "counter" => {
            let family = name.strip_suffix("_total").unwrap_or(name);
            vec![
                family.to_owned(),
                format!("{family}_total"),
                format!("{family}_created"),
            ]
        }
        "histogram" | "summary" => ["", "_bucket", "_sum", "_count", "_created"]
            .iter()
            .map(|suffix| format!("{name}{suffix}"))
            .collect(),
        _ => vec![name.to_owned()],
    }
}

/// Every name two `# TYPE` declarations of `page` both occupy, with the two declarations.
pub fn clashes(page: &str) -> Vec<String> {
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut found = Vec::new();
    for line in page.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        for taken in names_of(name, kind) {
            match owner.get(&taken) {
                Some(other) => found.push(format!("{taken}: {other} and {name} ({kind})")),
                None => {
                    owner.insert(taken, format!("{name} ({kind})"));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gauge_and_a_counter_of_the_same_base_name_clash() {
        let page = "# TYPE iris_gateway_connections gauge\n\
                    # TYPE iris_gateway_connections_total counter\n";
        assert_eq!(
            clashes(page),
            ["iris_gateway_connections: iris_gateway_connections (gauge) and iris_gateway_connections_total (counter)"]
        );
    }

    #[test]
    fn a_gauge_named_like_a_histograms_series_clashes() {
        let page = "# TYPE x_seconds histogram\n# TYPE x_seconds_count gauge\n";
        assert_eq!(clashes(page).len(), 1);
    }

    #[test]
    fn distinct_families_do_not_clash() {
        let page = "# TYPE iris_gateway_connections gauge\n\
                    # TYPE iris_gateway_connections_accepted_total counter\n\
                    # TYPE process_cpu_seconds_total counter\n\
                    # TYPE iris_gateway_delivery_latency_seconds histogram\n";
        assert!(clashes(page).is_empty());
    }
}
