//! Exact amounts: integer minor units of an ISO 4217 currency (cents for USD, yen for JPY,
//! fils for KWD), so sums never drift. Amounts arrive and leave as JSON numbers in major
//! units; an amount with more decimals than its currency has is refused.

use serde::{Deserialize, Serialize};

/// The largest amount, in minor units, that converts to and from a JSON number exactly.
pub const MAX_EXACT_MINOR: i64 = 1 << 53;

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

    fn scale(&self) -> i64 {
        10i64.pow(self.exponent as u32)
    }

    /// Minor units for an amount in major units, if it has no more decimals than the
    /// currency allows.
    pub fn minor(&self, major: f64) -> Result<i64, String> {
        if !major.is_finite() {
            return Err("must be a number".into());
        }
        let scaled = major * self.scale() as f64;
        let rounded = scaled.round();
        // Past 2^53 a float no longer holds every integer: refuse rather than alter.
        if rounded.abs() > MAX_EXACT_MINOR as f64 {
            return Err("is too large to be kept exactly".into());
        }
        if (scaled - rounded).abs() > 1e-6 * rounded.abs().max(1.0) {
            return Err(format!(
                "has more than {} decimal places, which {} does not have",
                self.exponent,
                self.code()
            ));
        }
        Ok(rounded as i64)
    }

    /// Major units, for the wire.
    pub fn major(&self, minor: i64) -> f64 {
        self.major_wide(minor as i128)
    }

    /// Major units of a sum, which may exceed i64.
    pub fn major_wide(&self, minor: i128) -> f64 {
        minor as f64 / self.scale() as f64
    }
}

fn exponent_of(code: &str) -> Option<u8> {
    const ZERO: &str = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF";
    const THREE: &str = "BHD IQD JOD KWD LYD OMR TND";
    const FOUR: &str = "CLF UYW";
    const TWO: &str = "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL";
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
    use super::*;

    #[test]
    fn known_codes_only_in_any_case() {
        assert_eq!(Currency::parse("usd").unwrap().code(), "USD");
        assert!(Currency::parse("XYZ").is_err());
        assert!(Currency::parse("US").is_err());
    }

    #[test]
    fn amounts_convert_exactly_and_sums_do_not_drift() {
        let usd = Currency::parse("USD").unwrap();
        let cents: i64 = (0..10).map(|_| usd.minor(0.1).unwrap()).sum();
        assert_eq!(cents, 100);
        assert_eq!(usd.major(cents), 1.0);
        assert_eq!(usd.minor(19.99).unwrap(), 1999);
        assert_eq!(usd.minor(100_000_000.0).unwrap(), 10_000_000_000);
    }

    #[test]
    fn amounts_too_large_to_keep_exactly_are_refused() {
        let usd = Currency::parse("USD").unwrap();
        assert!(usd.minor(1e17).is_err());
        assert!(usd.minor(1e300).is_err());
        assert!(usd.minor(90_000_000_000_000.0).is_ok());
        assert_eq!(usd.major_wide(2_000_000_000_000_000_000), 2e16);
    }

    #[test]
    fn decimals_beyond_the_currency_are_refused() {
        assert!(Currency::parse("USD").unwrap().minor(1.005).is_err());
        assert!(Currency::parse("JPY").unwrap().minor(1.5).is_err());
        assert_eq!(Currency::parse("KWD").unwrap().minor(1.005).unwrap(), 1005);
    }
}
