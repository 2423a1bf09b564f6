//! Fixed-window counters: a few bytes of state per limit, no timers.

use std::time::{Duration, Instant};

/// Allows `limit` events per `period`, counted in fixed windows that start with the first event
/// after the previous window ended.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    period: Duration,
    limit: u32,
    start: Option<Instant>,
    count: u32,
}

/// What [`Window::hit`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hit {
    Allowed,
    /// The first event over the limit in this window.
    FirstRefused,
    Refused,
}

impl Window {
    pub(crate) fn new(limit: u32, period: Duration) -> Window {
        Window {
            period,
            limit,
            start: None,
            count: 0,
        }
    }

    pub(crate) fn hit(&mut self, now: Instant) -> Hit {
        match self.start {
            Some(start) if now.saturating_duration_since(start) < self.period => {}
            _ => {
                self.start = Some(now);
                self.count = 0;
            }
        }
        self.count = self.count.saturating_add(1);
        if self.count <= self.limit {
            Hit::Allowed
        } else if self.count == self.limit + 1 {
            Hit::FirstRefused
        } else {
            Hit::Refused
        }
    }

    /// When the current window ends (`None` before the first event).
    pub(crate) fn ends_at(&self) -> Option<Instant> {
        self.start.map(|s| s + self.period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_window() {
        let t0 = Instant::now();
        let mut w = Window::new(2, Duration::from_secs(1));
        assert_eq!(w.hit(t0), Hit::Allowed);
        assert_eq!(w.hit(t0), Hit::Allowed);
        assert_eq!(w.hit(t0 + Duration::from_millis(10)), Hit::FirstRefused);
        assert_eq!(w.hit(t0 + Duration::from_millis(20)), Hit::Refused);
        assert_eq!(w.ends_at(), Some(t0 + Duration::from_secs(1)));
        assert_eq!(w.hit(t0 + Duration::from_secs(1)), Hit::Allowed);
        assert_eq!(w.ends_at(), Some(t0 + Duration::from_secs(2)));
    }
}
