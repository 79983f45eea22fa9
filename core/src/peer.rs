//! Who a connection or a legacy session comes from, for the limits that are shared fairly
//! between clients: one host's address.

use std::net::IpAddr;

/// The address one host holds whole: an IPv4 address as it is (an IPv4-mapped IPv6 address
/// as its IPv4 form), or the /64 prefix of an IPv6 one (a host is usually given a whole /64).
pub(crate) fn host_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::host_of;

    #[test]
    fn hosts_are_ipv4_addresses_and_ipv6_slash_64_prefixes() {
        let host = |s: &str| host_of(s.parse().unwrap()).to_string();
        assert_eq!(host("192.0.2.1"), "192.0.2.1");
        assert_eq!(host("::ffff:192.0.2.1"), "192.0.2.1");
        assert_eq!(host("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::");
    }
}
