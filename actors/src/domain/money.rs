//! Exact amounts: integer minor units of an ISO 4217 currency (cents for USD, yen for JPY,
//! fils for KWD), so sums never drift. Amounts arrive as JSON numbers in major units and
//! are read from the number's text ([`Amount`]), never through a float; they leave as JSON
//! numbers written from the integer minor units ([`MajorUnits`]). An amount with more
//! decimals than its currency has is refused, whatever its size.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest amount, in minor units, one field takes: every whole number of minor units
/// up to it is also a double, so a client that reads JSON numbers as doubles and the
/// integer totals here never disagree.
pub const MAX_EXACT_MINOR: i64 = 1 << 53;

/// A decimal number exactly as a client wrote it: `digits × 10^exponent`, with `digits`
/// free of leading and trailing zeros (empty for zero). Read from the JSON number's text,
/// so `4999.995` stays `4999.995` and `0.30000000000000001` keeps its last digit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl Default for Amount {
    fn default() -> Self {
        Self::zero()
    }
}

/// Why an amount does not fit a number of decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unfit {
    TooPrecise,
    TooLarge,
}

/// Exponents beyond this mean "absurdly large or small" and are clamped, so that the
/// arithmetic on them cannot overflow.
const EXPONENT_CLAMP: i64 = 1 << 40;

impl Amount {
    /// A JSON number's text: `-?digits[.digits][e[+-]digits]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || "must be a number".to_string();
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exp_text) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
            None => (unsigned, None),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
            return Err(bad());
        }
        if mantissa.contains('.') && fraction.is_empty() {
            return Err(bad());
        }
        let mut exponent = match exp_text {
            None => 0,
            Some(e) => {
                let (sign, magnitude) = match e.as_bytes().first() {
                    Some(b'-') => (-1, &e[1..]),
                    Some(b'+') => (1, &e[1..]),
                    _ => (1, e),
                };
                if magnitude.is_empty() || !all_digits(magnitude) {
                    return Err(bad());
                }
                let magnitude = magnitude.trim_start_matches('0');
                let value = if magnitude.len() > 13 {
                    EXPONENT_CLAMP
                } else {
                    magnitude.parse::<i64>().unwrap_or(0).min(EXPONENT_CLAMP)
                };
                sign * value
            }
        };
        exponent -= fraction.len() as i64;
        let joined = format!("{whole}{fraction}");
        let significant = joined.trim_start_matches('0');
        let digits = significant.trim_end_matches('0');
        exponent += (significant.len() - digits.len()) as i64;
        Ok(Self {
            negative,
            digits: digits.to_string(),
            exponent: if digits.is_empty() { 0 } else { exponent },
        })
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Below zero; `-0` is zero, not negative.
    pub fn is_negative(&self) -> bool {
        self.negative && !self.is_zero()
    }

    /// Whether the amount is above the whole number `limit`.
    pub fn exceeds(&self, limit: u64) -> bool {
        let limit = Self::parse(&limit.to_string()).unwrap_or_else(|_| Self::zero());
        !self.is_negative() && self.magnitude_cmp(&limit) == Ordering::Greater
    }

    fn zero() -> Self {
        Self {
            negative: false,
            digits: String::new(),
            exponent: 0,
        }
    }

    /// Compares absolute values: first by the position of the leading digit, then digit by
    /// digit (no trailing zeros, so a longer run of the same leading digits is larger).
    fn magnitude_cmp(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => {
                let lead = |a: &Self| a.digits.len() as i64 + a.exponent;
                lead(self)
                    .cmp(&lead(other))
                    .then_with(|| self.digits.cmp(&other.digits))
            }
        }
    }

    /// The amount as a whole number of `10^-decimals` units.
    fn scaled(&self, decimals: u8) -> Result<i128, Unfit> {
        if self.is_zero() {
            return Ok(0);
        }
        let shift = self.exponent + i64::from(decimals);
        if shift < 0 {
            return Err(Unfit::TooPrecise);
        }
        // i128 holds every number of up to 38 digits.
        if self.digits.len() as i64 + shift > 38 {
            return Err(Unfit::TooLarge);
        }
        let digits: i128 = self.digits.parse().map_err(|_| Unfit::TooLarge)?;
        let value = 10i128
            .checked_pow(shift as u32)
            .and_then(|scale| digits.checked_mul(scale))
            .ok_or(Unfit::TooLarge)?;
        Ok(if self.negative { -value } else { value })
    }
}

impl<'de> Deserialize<'de> for Amount {
    /// From the number's text: serde_json keeps it (feature `arbitrary_precision`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let number = serde_json::Number::deserialize(d)?;
        Self::parse(&number.to_string()).map_err(serde::de::Error::custom)
    }
}

/// An amount in minor units, answered as a JSON number in major units written from the
/// integer (`19.99`, `1000.0`, `0.125`), so no float rounding reaches a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MajorUnits {
    minor: i128,
    exponent: u8,
}

impl fmt::Display for MajorUnits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scale = 10u128.pow(u32::from(self.exponent));
        let magnitude = self.minor.unsigned_abs();
        let sign = if self.minor < 0 { "-" } else { "" };
        let whole = magnitude / scale;
        let fraction = format!(
            "{:0width$}",
            magnitude % scale,
            width = usize::from(self.exponent)
        );
        let fraction = fraction.trim_end_matches('0');
        // Always one decimal, as a float would be written: 10.0, not 10 or 10.00.
        let fraction = if fraction.is_empty() { "0" } else { fraction };
        write!(f, "{sign}{whole}.{fraction}")
    }
}

impl Serialize for MajorUnits {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.to_string();
        let number: serde_json::Number = text.parse().map_err(serde::ser::Error::custom)?;
        number.serialize(s)
    }
}

/// `-0.0` as `0.0`, so a negative zero is never echoed as `-0.0`.
pub fn plain_zero(value: f64) -> f64 {
    value + 0.0
}

/// The double a JSON number is kept as, when it holds the number as written: the double's
/// shortest decimal form has the same value (`0.1`, `1e3` and `9007199254740993.0` aside:
/// the last is not held). `None` for a number a double would silently change.
pub fn exact_double(n: &serde_json::Number) -> Option<f64> {
    let value = n.as_f64().filter(|v| v.is_finite())?;
    (decimal_value(&n.to_string())? == decimal_value(&format!("{value:e}"))?)
        .then_some(plain_zero(value))
}

/// A decimal text as (negative, significant digits, exponent of the last digit), so that
/// two texts of one value compare equal; zero is `(false, "", 0)`.
fn decimal_value(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = format!("{whole}{fraction}");
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut exponent = exponent - fraction.len() as i64;
    let trailing = digits.len() - digits.trim_end_matches('0').len();
    digits.truncate(digits.len() - trailing);
    exponent += trailing as i64;
    let digits = digits.trim_start_matches('0').to_string();
    if digits.is_empty() {
        return Some((false, String::new(), 0));
    }
    Some((negative, digits, exponent))
}

/// An ISO 4217 code and how many minor-unit digits it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Currency {
    code: [u8; 3],
    exponent: u8,
}

impl Currency {
    /// A known three-letter code, in any case.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let up = raw.trim().to_ascii_uppercase();
        let exponent = exponent_of(&up).ok_or_else(|| {
            "must be a three-letter ISO 4217 currency code, like USD or EUR".to_string()
        })?;
        let bytes = up.as_bytes();
        Ok(Self {
            code: [bytes[0], bytes[1], bytes[2]],
            exponent,
        })
    }

    pub fn code(&self) -> &str {
        std::str::from_utf8(&self.code).unwrap_or("XXX")
    }

    /// Minor units for an amount in major units, if it has no more decimals than the
    /// currency allows and is at most [`MAX_EXACT_MINOR`].
    pub fn minor(&self, major: &Amount) -> Result<i64, String> {
        let too_large = || "is too large".to_string();
        match major.scaled(self.exponent) {
            Err(Unfit::TooPrecise) if self.exponent == 0 => Err(format!(
                "must be a whole number: {} has no decimal places",
                self.code()
            )),
            Err(Unfit::TooPrecise) => Err(format!(
                "has more than {} decimal places, which {} does not have",
                self.exponent,
                self.code()
            )),
            Err(Unfit::TooLarge) => Err(too_large()),
            Ok(minor) if minor.unsigned_abs() > MAX_EXACT_MINOR as u128 => Err(too_large()),
            Ok(minor) => i64::try_from(minor).map_err(|_| too_large()),
        }
    }

    /// Major units, for the wire.
    pub fn major(&self, minor: i64) -> MajorUnits {
        self.major_wide(i128::from(minor))
    }

    /// Major units of a sum, which may exceed i64.
    pub fn major_wide(&self, minor: i128) -> MajorUnits {
        MajorUnits {
            minor,
            exponent: self.exponent,
        }
    }
}

/// The ISO 4217 codes this service knows, by minor-unit digits.
const ZERO: &str = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF";
const THREE: &str = "BHD IQD JOD KWD LYD OMR TND";
const FOUR: &str = "CLF UYW";
const TWO: &str = "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL";

/// Every known currency code (upper case).
pub fn known_currencies() -> impl Iterator<Item = &'static str> {
    [ZERO, TWO, THREE, FOUR]
        .into_iter()
        .flat_map(|list| list.split(' '))
}

fn exponent_of(code: &str) -> Option<u8> {
    let has = |list: &str| list.split(' ').any(|c| c == code);
    if code.len() != 3 {
        None
    } else if has(TWO) {
        Some(2)
    } else if has(ZERO) {
        Some(0)
    } else if has(THREE) {
        Some(3)
    } else if has(FOUR) {
        Some(4)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_number_is_kept_as_a_double_only_when_it_holds_it_as_written() {
        let n = |text: &str| serde_json::from_str::<serde_json::Number>(text).unwrap();
        for (text, kept) in [
            ("0.1", Some(0.1)),
            ("12", Some(12.0)),
            ("-2.50", Some(-2.5)),
            ("1e3", Some(1000.0)),
            ("-0", Some(0.0)),
            ("9007199254740992", Some(9007199254740992.0)),
        ] {
            assert_eq!(exact_double(&n(text)), kept, "{text}");
        }
        for text in [
            "9007199254740993",
            "123456789012345678901234567890",
            "0.12345678901234567891",
        ] {
            assert_eq!(exact_double(&n(text)), None, "{text}");
        }
    }

    use super::*;

    fn usd() -> Currency {
        Currency::parse("USD").unwrap()
    }

    fn amount(text: &str) -> Amount {
        Amount::parse(text).unwrap()
    }

    fn minor(currency: &str, text: &str) -> Result<i64, String> {
        Currency::parse(currency).unwrap().minor(&amount(text))
    }

    #[test]
    fn known_codes_only_in_any_case() {
        assert_eq!(Currency::parse("usd").unwrap().code(), "USD");
        assert!(Currency::parse("XYZ").is_err());
        assert!(Currency::parse("US").is_err());
    }

    #[test]
    fn amounts_convert_exactly_and_sums_do_not_drift() {
        let cents: i64 = (0..10).map(|_| minor("USD", "0.1").unwrap()).sum();
        assert_eq!(cents, 100);
        assert_eq!(usd().major(cents).to_string(), "1.0");
        assert_eq!(minor("USD", "19.99").unwrap(), 1999);
        assert_eq!(minor("USD", "100000000").unwrap(), 10_000_000_000);
        assert_eq!(minor("USD", "1.5e2").unwrap(), 15_000);
        assert_eq!(minor("USD", "1999E-2").unwrap(), 1999);
    }

    #[test]
    fn decimals_beyond_the_currency_are_refused_at_every_size() {
        for text in [
            "1.005",
            "4999.995",
            "123456.789",
            "99999999.999",
            "0.001",
            "0.30000000000000001",
            "1e-3",
        ] {
            let refused = minor("USD", text).unwrap_err();
            assert!(refused.contains("more than 2 decimal places"), "{text}");
        }
        assert!(minor("JPY", "1.5").unwrap_err().contains("whole number"));
        assert_eq!(minor("KWD", "1.005").unwrap(), 1005);
        assert_eq!(minor("CLF", "0.0001").unwrap(), 1);
    }

    #[test]
    fn trailing_zeros_and_negative_zero_are_plain_values() {
        assert_eq!(minor("USD", "1.500000").unwrap(), 150);
        assert_eq!(minor("JPY", "500.000").unwrap(), 500);
        assert_eq!(minor("USD", "-0").unwrap(), 0);
        assert_eq!(minor("USD", "-0.0e7").unwrap(), 0);
        assert!(!amount("-0").is_negative());
        assert!(amount("-0.01").is_negative());
    }

    #[test]
    fn amounts_too_large_are_refused() {
        assert!(minor("USD", "1e17").is_err());
        assert!(minor("USD", "1e300").is_err());
        assert!(minor("USD", "1e99999999999999999999").is_err());
        assert!(minor("USD", "90000000000000").is_ok());
        assert_eq!(
            usd().major_wide(2_000_000_000_000_000_000).to_string(),
            "20000000000000000.0"
        );
    }

    #[test]
    fn tiny_exponents_are_too_precise_not_a_crash() {
        assert!(minor("USD", "1e-99999999999999999999").is_err());
        assert_eq!(minor("USD", "0e-99999999999999999999").unwrap(), 0);
    }

    #[test]
    fn ceilings_compare_exactly() {
        assert!(!amount("100000000").exceeds(100_000_000));
        assert!(!amount("100000000.000").exceeds(100_000_000));
        assert!(!amount("1e8").exceeds(100_000_000));
        assert!(amount("100000000.01").exceeds(100_000_000));
        assert!(amount("100000000.0000000000000000001").exceeds(100_000_000));
        assert!(amount("9.2e18").exceeds(100_000_000));
        assert!(!amount("99999999.99").exceeds(100_000_000));
        assert!(!amount("-5e20").exceeds(100_000_000));
        assert!(!amount("0").exceeds(0));
    }

    #[test]
    fn malformed_texts_are_refused() {
        for bad in [
            "", "-", "1.", ".5", "1e", "1e+", "abc", "1.2.3", "0x10", "1_000",
        ] {
            assert!(Amount::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn major_units_are_written_from_the_integer() {
        let text = |c: &str, minor: i128| Currency::parse(c).unwrap().major_wide(minor).to_string();
        assert_eq!(text("USD", 1999), "19.99");
        assert_eq!(text("USD", 1000), "10.0");
        assert_eq!(text("USD", 5), "0.05");
        assert_eq!(text("USD", 0), "0.0");
        assert_eq!(text("USD", -250), "-2.5");
        assert_eq!(text("JPY", 500), "500.0");
        assert_eq!(text("KWD", 125), "0.125");
        assert_eq!(text("USD", 199_999_999_999_999_999), "1999999999999999.99");
        let json = serde_json::to_string(&usd().major(499_999)).unwrap();
        assert_eq!(json, "4999.99");
    }

    #[test]
    fn amounts_are_read_from_the_json_text() {
        let read = |json: &str| serde_json::from_str::<Amount>(json).unwrap();
        assert_eq!(read("4999.995"), amount("4999.995"));
        assert_eq!(read("0.30000000000000001"), amount("0.30000000000000001"));
        let via_value: serde_json::Value = serde_json::from_str("0.30000000000000001").unwrap();
        let from_value: Amount = serde_json::from_value(via_value).unwrap();
        assert_eq!(from_value, amount("0.30000000000000001"));
        assert!(serde_json::from_str::<Amount>("\"1.5\"").is_err());
    }
}
