# One try per destination, from inside a test-created network namespace whose
# loopback carries 10.77.0.1-2 and fd00::1-2. Prints {case: "ok" | errno name}.
import errno, json, socket

def tcp_listen(family, addr, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    return s

def udp_bind(family, addr, port):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, port))
    return s

keep = [tcp_listen(socket.AF_INET, "10.77.0.1", 8080), tcp_listen(socket.AF_INET6, "fd00::1", 8080),
        udp_bind(socket.AF_INET, "10.77.0.1", 5353), udp_bind(socket.AF_INET6, "fd00::1", 5353)]

def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def connect(family, addr, port, kind=socket.SOCK_STREAM):
    def go():
        with socket.socket(family, kind) as s:
            s.settimeout(2)
            s.connect((addr, port))
    return go

def sendto(family, addr, port):
    def go():
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", (addr, port))
    return go

def sock(family, kind, proto):
    def go():
        socket.socket(family, kind, proto).close()
    return go

cases = {
    "tcp4_allowed": connect(socket.AF_INET, "10.77.0.1", 8080),
    "tcp4_other_port": connect(socket.AF_INET, "10.77.0.1", 8081),
    "tcp4_other_addr": connect(socket.AF_INET, "10.77.0.2", 8080),
    "udp4_allowed": sendto(socket.AF_INET, "10.77.0.1", 5353),
    "udp4_other": sendto(socket.AF_INET, "10.77.0.2", 5353),
    "udp4_connect_other": connect(socket.AF_INET, "10.77.0.2", 5353, socket.SOCK_DGRAM),
    "tcp6_allowed": connect(socket.AF_INET6, "fd00::1", 8080),
    "tcp6_other": connect(socket.AF_INET6, "fd00::2", 8080),
    "udp6_allowed": sendto(socket.AF_INET6, "fd00::1", 5353),
    "udp6_other": sendto(socket.AF_INET6, "fd00::2", 5353),
    "mapped_allowed": connect(socket.AF_INET6, "::ffff:10.77.0.1", 8080),
    "mapped_other": connect(socket.AF_INET6, "::ffff:10.77.0.2", 8080),
    "raw": sock(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    "ping": sock(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
}
print(json.dumps({k: attempt(f) for k, f in cases.items()}))
