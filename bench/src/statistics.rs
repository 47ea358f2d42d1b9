//! Summary statistics and Welch's t-test for the comparison table.
//!
//! Self-contained (no statistics crate): the two-sided p-value of Student's t comes from the
//! regularized incomplete beta function, `p = I_{df/(df+t^2)}(df/2, 1/2)`, evaluated with the
//! continued fraction of Numerical Recipes (Lentz's method) and a Lanczos log-gamma.

use serde::{Deserialize, Serialize};

/// Which way is better for a metric; decides the mean used and the sign of the % change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times, latencies: summarized by the arithmetic mean, % change positive when lower.
    LowerIsBetter,
    /// Rates, throughputs: summarized by the harmonic mean, % change positive when higher.
    HigherIsBetter,
}

impl Direction {
    /// The mmtests name of the mean used for this direction.
    pub fn mean_name(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "Amean",
            Direction::HigherIsBetter => "Hmean",
        }
    }

    pub fn mean(self, xs: &[f64]) -> f64 {
        match self {
            Direction::LowerIsBetter => amean(xs),
            Direction::HigherIsBetter => hmean(xs),
        }
    }
}

/// Arithmetic mean; NaN for no values.
pub fn amean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Harmonic mean; NaN for no values or a negative value, 0 if a value is 0 (the limit).
pub fn hmean(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|&x| x < 0.0 || x.is_nan()) {
        return f64::NAN;
    }
    if xs.contains(&0.0) {
        return 0.0;
    }
    xs.len() as f64 / xs.iter().map(|x| 1.0 / x).sum::<f64>()
}

/// Sample variance (n - 1 in the denominator); NaN for fewer than 2 values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = amean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample standard deviation; NaN for fewer than 2 values.
pub fn stddev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

/// % change of `new` against `base`, positive when `new` is better:
/// `(base - new) / base` for times, `(new - base) / base` for rates. None if base is 0 or NaN.
pub fn pct_change(base: f64, new: f64, dir: Direction) -> Option<f64> {
    if base == 0.0 || !base.is_finite() || !new.is_finite() {
        return None;
    }
    Some(match dir {
        Direction::LowerIsBetter => (base - new) / base * 100.0,
        Direction::HigherIsBetter => (new - base) / base * 100.0,
    })
}

/// Result of Welch's unequal-variances t-test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// t = (mean(a) - mean(b)) / sqrt(var(a)/na + var(b)/nb)
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `a` against `b`. None when either side has fewer than 2 values.
/// When both variances are 0 the test degenerates: p = 1 if the means are equal, else 0.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = amean(a) - amean(b);
    let se2 = va + vb;
    if se2 == 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 { 0.0 } else { diff.signum() * f64::INFINITY };
        return Some(Welch { t, df: na + nb - 2.0, p });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some(Welch { t, df, p: t_two_sided_p(t, df) })
}

/// Significance level of the table's `*` marks.
pub const ALPHA: f64 = 0.05;

/// True if `a` and `b` differ at 95% (two-sided Welch); false if untestable.
pub fn significant(a: &[f64], b: &[f64]) -> bool {
    welch(a, b).is_some_and(|w| w.p < ALPHA)
}

/// Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| >= |t|).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    reg_inc_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; ~15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection: Γ(x)Γ(1-x) = π / sin(πx)
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta I_x(a, b).
pub fn reg_inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Continued fraction for the incomplete beta (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=500 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Summary of one cell of the table: one variant at one parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    pub fn of(xs: &[f64], dir: Direction) -> Option<Self> {
        if xs.is_empty() {
            return None;
        }
        Some(Summary {
            n: xs.len(),
            mean: dir.mean(xs),
            stddev: stddev(xs),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn close(got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() <= tol, "got {got}, want {want} (±{tol})");
    }

    #[test]
    fn means_and_stddev() {
        // By hand: (1+2+3+4)/4 = 2.5; 4 / (1 + 1/2 + 1/3 + 1/4) = 48/25 = 1.92;
        // var = ((1.5²+0.5²)*2)/3 = 5/3, sd = 1.290994...
        let xs = [1.0, 2.0, 3.0, 4.0];
        close(amean(&xs), 2.5, 1e-12);
        close(hmean(&xs), 1.92, 1e-12);
        close(variance(&xs), 5.0 / 3.0, 1e-12);
        close(stddev(&xs), 1.2910, 5e-5);
        // scipy.stats.hmean([40, 60]) = 48.0; numpy.std([2,4,4,4,5,5,7,9], ddof=1) = 2.138090
        close(hmean(&[40.0, 60.0]), 48.0, 1e-12);
        close(stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), 2.138090, 1e-6);
        assert!(amean(&[]).is_nan());
        assert!(stddev(&[1.0]).is_nan());
        assert_eq!(hmean(&[0.0, 3.0]), 0.0);
        assert!(hmean(&[-1.0, 3.0]).is_nan());
        assert_eq!(Direction::LowerIsBetter.mean(&xs), 2.5);
        close(Direction::HigherIsBetter.mean(&xs), 1.92, 1e-12);
    }

    #[test]
    fn special_functions() {
        // ln Γ: Γ(5) = 24, Γ(0.5) = √π, Γ(10.3) from scipy.special.gammaln(10.3) = 13.482037
        close(ln_gamma(5.0), 24f64.ln(), 1e-12);
        close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12);
        close(ln_gamma(1.0), 0.0, 1e-13);
        close(ln_gamma(10.3), 13.482037, 1e-6);
        // I_x(a, 1) = x^a; I_x(1, b) = 1 - (1-x)^b; I_0.5(a, a) = 0.5
        close(reg_inc_beta(3.0, 1.0, 0.4), 0.064, 1e-12);
        close(reg_inc_beta(1.0, 4.0, 0.3), 1.0 - 0.7f64.powi(4), 1e-12);
        close(reg_inc_beta(7.5, 7.5, 0.5), 0.5, 1e-12);
    }

    #[test]
    fn t_distribution_p_values() {
        // Closed forms: df = 1 is Cauchy, p = 1 - 2/π·atan|t|; df = 2: p = 1 - |t|/sqrt(2 + t²).
        for t in [0.1, 0.5, 1.0, 2.0, 7.0] {
            close(t_two_sided_p(t, 1.0), 1.0 - 2.0 / std::f64::consts::PI * t.atan(), 1e-12);
            close(t_two_sided_p(-t, 2.0), 1.0 - t / (2.0 + t * t).sqrt(), 1e-12);
        }
        // Critical values from t tables (scipy.stats.t.ppf(0.975, df)): p = 0.05 exactly.
        close(t_two_sided_p(2.2281, 10.0), 0.05, 5e-5); // t.ppf(0.975, 10) = 2.228139
        close(t_two_sided_p(2.0423, 30.0), 0.05, 5e-5); // t.ppf(0.975, 30) = 2.042272
        close(t_two_sided_p(12.7062, 1.0), 0.05, 5e-5); // t.ppf(0.975, 1) = 12.706205
        close(t_two_sided_p(0.0, 5.0), 1.0, 1e-12);
        assert_eq!(t_two_sided_p(f64::INFINITY, 5.0), 0.0);
    }

    #[test]
    fn welch_known_values() {
        // Expected numbers from scipy.stats.ttest_ind(a, b, equal_var=False) (scipy 1.x), and the
        // Welch–Satterthwaite df computed with numpy: see the comments on each case.
        // Case 1: a = [0.2540, 0.2550, 0.2530, 0.2545, 0.2535], b = [0.2533, 0.2520, 0.2541,
        // 0.2529, 0.2536] (not significant).
        let a = [0.2540, 0.2550, 0.2530, 0.2545, 0.2535];
        let b = [0.2533, 0.2520, 0.2541, 0.2529, 0.2536];
        let w = welch(&a, &b).unwrap();
        close(w.t, WELCH1.0, 1e-5);
        close(w.df, WELCH1.1, 1e-5);
        close(w.p, WELCH1.2, 1e-5);
        assert!(!significant(&a, &b));
        // Case 2 (significant): a = [1.18, 1.19, 1.17, 1.20, 1.17], b = [1.10, 1.11, 1.09, 1.12].
        let a = [1.18, 1.19, 1.17, 1.20, 1.17];
        let b = [1.10, 1.11, 1.09, 1.12];
        let w = welch(&a, &b).unwrap();
        close(w.t, WELCH2.0, 1e-5);
        close(w.df, WELCH2.1, 1e-5);
        close(w.p, WELCH2.2, 1e-5);
        assert!(significant(&a, &b));
        // Case 3: unequal sizes and spreads (significant at 95%), a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9,
        // 19.5, 22.0], b = [28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2,
        // 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 24.0, 13.2] (Welch's test example data).
        let a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let b = [
            28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4,
            24.0, 13.2,
        ];
        let w = welch(&a, &b).unwrap();
        close(w.t, WELCH3.0, 1e-5);
        close(w.df, WELCH3.1, 1e-5);
        close(w.p, WELCH3.2, 1e-5);
        // symmetric in the sign of t
        let w2 = welch(&b, &a).unwrap();
        close(w2.t, -w.t, 1e-12);
        close(w2.p, w.p, 1e-12);
        // untestable / degenerate
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        assert!(!significant(&[1.0], &[1.0, 2.0]));
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]).unwrap().p, 0.0);
    }

    // (t, df, p) per case from scipy 1.17.1: r = scipy.stats.ttest_ind(a, b, equal_var=False),
    // (r.statistic, r.df, r.pvalue), rounded to 6 decimals.
    const WELCH1: (f64, f64, f64) = (1.638690, 7.999980, 0.139911);
    const WELCH2: (f64, f64, f64) = (8.851939, 6.598387, 0.000067);
    const WELCH3: (f64, f64, f64) = (-2.219241, 24.496223, 0.035972);

    #[test]
    fn pct_change_signs() {
        // times: faster (lower) is positive
        close(pct_change(1.1823, 1.1037, Direction::LowerIsBetter).unwrap(), 6.6481, 5e-5); // 0.0786 / 1.1823
        close(pct_change(0.2540, 0.2600, Direction::LowerIsBetter).unwrap(), -2.3622, 5e-5);
        // rates: higher is positive
        close(pct_change(214.34, 210.79, Direction::HigherIsBetter).unwrap(), -1.6562, 5e-5); // -3.55 / 214.34
        close(pct_change(100.0, 110.0, Direction::HigherIsBetter).unwrap(), 10.0, 1e-12);
        assert_eq!(pct_change(0.0, 1.0, Direction::HigherIsBetter), None);
        assert_eq!(pct_change(f64::NAN, 1.0, Direction::HigherIsBetter), None);
    }

    #[test]
    fn summary() {
        let s = Summary::of(&[2.0, 4.0], Direction::HigherIsBetter).unwrap();
        assert_eq!((s.n, s.min, s.max), (2, 2.0, 4.0));
        close(s.mean, 8.0 / 3.0, 1e-12);
        close(s.stddev, 2f64.sqrt(), 1e-12);
        assert!(Summary::of(&[], Direction::LowerIsBetter).is_none());
    }
}
