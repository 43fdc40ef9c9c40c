# Egress probes run inside a lease: for each "<4|6> <tcp|udp> <name> <port>"
# argument, resolves <name> (only /etc/hosts can answer: the lease has no
# nameserver; "@gateway" is the lease's IPv4 default gateway), sends a marker
# and prints one line:
#   OK <proto><family> <address> <reply>   or   ERR <proto><family> <errno name>
# An optional first argument "addr:<path>" writes the lease's own IPv4
# source address towards the first probe's server to <path> and then waits
# until <path>.go exists (the test looks at the host side meanwhile).
import errno, os, socket, sys, time

args = sys.argv[1:]
hold = None
if args and args[0].startswith("addr:"):
    hold = args.pop(0)[5:]

def default_gateway4():
    # The lease's own default route (the host end of its veth), from /proc/net/route.
    for line in open("/proc/net/route").read().splitlines()[1:]:
        f = line.split()
        if f[1] == "00000000":
            return socket.inet_ntoa(int(f[2], 16).to_bytes(4, "little"))
    raise OSError(errno.ENETUNREACH, "no default route")

def probe(fam, proto, name, port):
    family = socket.AF_INET if fam == "4" else socket.AF_INET6
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    tag = proto + fam
    try:
        if name == "@gateway":
            name = default_gateway4()
        addr = socket.getaddrinfo(name, int(port), family, kind)[0][4]
    except socket.gaierror as e:
        return f"ERR {tag} resolve:{e.args[0]}"
    s = socket.socket(family, kind)
    s.settimeout(5)
    try:
        if proto == "tcp":
            s.connect(addr)
            s.sendall(f"hi-{tag}".encode())
            data = s.recv(200)
        else:
            s.sendto(f"hi-{tag}".encode(), addr)
            data = s.recvfrom(200)[0]
        return f"OK {tag} {addr[0]} {data.decode()}"
    except socket.timeout:
        return f"ERR {tag} TIMEOUT"
    except OSError as e:
        return f"ERR {tag} {errno.errorcode.get(e.errno, e.errno)}"
    finally:
        s.close()

if hold:
    fam, proto, name, port = args[0].split()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((socket.getaddrinfo(name, int(port), socket.AF_INET)[0][4][0], int(port)))  # no packet sent
    with open(hold + ".tmp", "w") as f:
        f.write(s.getsockname()[0])
    os.rename(hold + ".tmp", hold)
    s.close()
    for _ in range(600):
        if os.path.exists(hold + ".go"):
            break
        time.sleep(0.05)

for a in args:
    print(probe(*a.split()), flush=True)
