import { describe, it, expect } from "@jest/globals";
import { clientAddress, isTrustedProxy } from "../../src/auth/client-address.js";
import { ConfigError, loadConfig } from "../../src/config.js";

const trusted = (list: string) => loadConfig({ NODE_ENV: "test", TRUSTED_PROXIES: list }, 4096).trustedProxies;
const from = (peer: string, forwardedFor?: string | string[]) => ({
  socket: { remoteAddress: peer },
  headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
});

describe("the client address: the TCP peer, or what a trusted proxy forwarded (TRUSTED_PROXIES)", () => {
  const proxies = trusted("10.0.0.0/8, 2001:db8:1::/48, 192.0.2.10");

  it("with no trusted proxy, and for a peer that is not one, X-Forwarded-For is ignored", () => {
    expect(clientAddress(from("10.1.2.3", "198.51.100.7"), [])).toBe("10.1.2.3");
    expect(clientAddress(from("203.0.113.9", "198.51.100.7"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(from("192.0.2.11", "198.51.100.7"), proxies)).toBe("192.0.2.11");
  });

  it("from a trusted proxy: the rightmost hop that is not a trusted proxy, never what the client wrote before it", () => {
    // nginx with $proxy_add_x_forwarded_for: the client's own header, then the address nginx saw.
    expect(clientAddress(from("10.0.0.2", "1.1.1.1, 198.51.100.7"), proxies)).toBe("198.51.100.7");
    // Two proxies: the inner one is trusted, so the walk goes on past it.
    expect(clientAddress(from("10.0.0.2", "1.1.1.1, 198.51.100.7, 10.9.9.9"), proxies)).toBe("198.51.100.7");
    // Repeated header lines are one list, in order.
    expect(clientAddress(from("192.0.2.10", ["1.1.1.1", "198.51.100.8"]), proxies)).toBe("198.51.100.8");
    // A dual-stack listener's IPv4-mapped peer is the IPv4 proxy; IPv6 proxies and clients, ports some proxies add.
    expect(clientAddress(from("::ffff:10.0.0.2", "198.51.100.9"), proxies)).toBe("198.51.100.9");
    expect(clientAddress(from("2001:db8:1:5::1", "2001:db8:2::7"), proxies)).toBe("2001:db8:2::7");
    expect(clientAddress(from("10.0.0.2", "[2001:db8:2::8]:4431"), proxies)).toBe("2001:db8:2::8");
    expect(clientAddress(from("10.0.0.2", "198.51.100.10:5555"), proxies)).toBe("198.51.100.10");
  });

  it("no header, or a hop that is no address: the last trusted proxy reached", () => {
    expect(clientAddress(from("10.0.0.2"), proxies)).toBe("10.0.0.2");
    expect(clientAddress(from("10.0.0.2", "198.51.100.7, unknown"), proxies)).toBe("10.0.0.2");
    expect(clientAddress(from("10.0.0.2", "198.51.100.7, 127.1, 10.0.0.3"), proxies)).toBe("10.0.0.3");
    expect(clientAddress(from("10.0.0.2", "010.0.0.1"), proxies)).toBe("10.0.0.2");
  });

  it("isTrustedProxy: the connection caps' exemption", () => {
    expect(isTrustedProxy("10.200.0.1", proxies)).toBe(true);
    expect(isTrustedProxy("::ffff:192.0.2.10", proxies)).toBe(true);
    expect(isTrustedProxy("192.0.2.11", proxies)).toBe(false);
    expect(isTrustedProxy("10.0.0.1", [])).toBe(false);
  });
});

describe("TRUSTED_PROXIES is validated at start", () => {
  it("reads addresses and CIDR ranges, comma-separated; unset is none", () => {
    expect(trusted("")).toEqual([]);
    expect(trusted(" 127.0.0.1 , 172.30.0.0/16,::1, fd00::/8, ::ffff:10.0.0.1")).toEqual([
      "127.0.0.1/32",
      "172.30.0.0/16",
      "::1/128",
      "fd00::/8",
      "10.0.0.1/32",
    ]);
  });

  it("refuses anything else with one line naming the variable and the bad item", () => {
    for (const bad of [
      "10.0.0.0/33",
      "127.1",
      "010.0.0.1",
      "proxy",
      "10.0.0.0/8/8",
      "fe80::1%eth0",
      "::/129",
      "10.0.0.0/",
    ]) {
      let message = "";
      try {
        trusted(`127.0.0.1, ${bad}`);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        message = (err as Error).message;
      }
      expect(message).toBe(
        `TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges (10.0.0.0/8, fd00::/8), got "${bad}"`,
      );
    }
  });
});
