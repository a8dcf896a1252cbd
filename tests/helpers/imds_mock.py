#!/usr/bin/env python3
"""imds_mock.py - a stand-in for one cloud's instance metadata service, for tests/unit/test_cloud.c.

usage: imds_mock.py VENDOR [LOGFILE]

Listens on 127.0.0.1 on a port the kernel picks and prints that port as stdout's first line.
Every request is appended to LOGFILE (when given) as one JSON line:
{"method": ..., "path": path+query, "headers": {...}} (header names lowercased).

VENDOR is one of:
  aws            IMDSv2 only: PUT /latest/api/token needs X-aws-ec2-metadata-token-ttl-seconds
                 (1..21600); every GET needs the token in X-aws-ec2-metadata-token (else 401)
  aws-lookalike  the same EC2-compatible API, but services/domain is not amazonaws.com
  gcp            needs Metadata-Flavor: Google (else 403); answers carry Metadata-Flavor: Google
  azure          needs Metadata: true and an api-version (else 400)
  hetzner        /hetzner/v1/metadata, YAML
  upcloud        /metadata/v1.json
  vultr          /v1.json
  alicloud       like aws with the X-aliyun-ecs-metadata-token* headers
  ovh            OpenStack network_data.json / meta_data.json plus EC2-compatible meta-data
  slow           sleeps 5 s on every request, then 404
  none           404 for everything
Paths a vendor does not know get 404, as the real services answer.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

VENDORS = {
    "aws", "aws-lookalike", "gcp", "azure", "hetzner", "upcloud", "vultr", "alicloud", "ovh",
    "slow", "none",
}

AWS_TOKEN = "AQAEAFakeImdsV2Token0123456789abcdefghijklmnop=="
ALI_TOKEN = "AAAAAFakeAliyunToken9876543210zyxwvutsrq=="

AWS_META = {
    "services/domain": "amazonaws.com",
    "instance-type": "m5.large",
    "placement/region": "eu-west-1",
    "placement/availability-zone": "eu-west-1b",
    "placement/availability-zone-id": "euw1-az3",
    "instance-id": "i-0123456789abcdef0",
}
AWS_IDENTITY = {
    "accountId": "123456789012",
    "architecture": "x86_64",
    "availabilityZone": "eu-west-1b",
    "imageId": "ami-0abcdef1234567890",
    "instanceId": "i-0123456789abcdef0",
    "instanceType": "m5.large",
    "pendingTime": "2024-05-01T10:00:00Z",
    "privateIp": "172.31.1.10",
    "region": "eu-west-1",
    "version": "2017-09-30",
}
# An EC2-compatible service of another cloud: same paths, same token dance, its own domain.
LOOKALIKE_META = dict(AWS_META, **{
    "services/domain": "cloud.example.net",
    "instance-type": "c3.medium",
    "placement/region": "fr-par",
    "placement/availability-zone": "fr-par-1",
})

GCP = {
    "instance/machine-type": "projects/123456789012/machineTypes/e2-standard-4",
    "instance/zone": "projects/123456789012/zones/europe-west3-c",
    "instance/id": "4520031799277581759",
    "project/numeric-project-id": "123456789012",
    "project/project-id": "rtrack-test",
}

AZURE = {
    "compute": {
        "azEnvironment": "AzurePublicCloud",
        "location": "westeurope",
        "name": "rtrack-vm",
        "offer": "0001-com-ubuntu-server-jammy",
        "osType": "Linux",
        "provider": "Microsoft.Compute",
        "resourceGroupName": "rtrack-rg",
        "subscriptionId": "8d10da13-8125-4ba9-a717-bf7490507b3d",
        "tags": "",
        "tagsList": [],
        "vmId": "02aab8a4-74ef-476e-8182-f6d2ba4166a6",
        "vmSize": "Standard_D2s_v3",
        "zone": "2",
    },
    "network": {
        "interface": [{
            "ipv4": {"ipAddress": [{"privateIpAddress": "10.0.0.4", "publicIpAddress": ""}],
                     "subnet": [{"address": "10.0.0.0", "prefix": "24"}]},
            "ipv6": {"ipAddress": []},
            "macAddress": "000D3AF806EC",
        }]
    },
}

HETZNER = """availability-zone: fsn1-dc14
hostname: rtrack-test
instance-id: 42424242
local-ipv4: ''
network-config:
  config:
  - mac_address: 96:00:00:08:19:da
    name: eth0
    subnets:
    - ipv4: true
      type: dhcp
    type: physical
  version: 1
network-sysconfig: "DEVICE='eth0'\\nTYPE=Ethernet\\nBOOTPROTO=dhcp\\n"
public-ipv4: 192.0.2.10
public-keys:
- ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIfake test@example
region: eu-central
vendor_data: '#cloud-config'
"""

UPCLOUD = {
    "cloud_name": "upcloud",
    "instance_id": "00322b68-0096-4042-9406-faad61922128",
    "hostname": "rtrack-test",
    "platform": "servers",
    "subplatform": "metadata (http://169.254.169.254)",
    "public_keys": [],
    "region": "de-fra1",
    "network": {"interfaces": [], "dns": ["94.237.127.9"]},
    "storage": {"disks": []},
    "tags": [],
    "user_data": "",
    "vendor_data": "",
}

VULTR = {
    "bgp": {"ipv4": {"my-address": "", "my-asn": "", "peer-address": "", "peer-asn": ""}},
    "hostname": "rtrack-test",
    "local-hostname": "rtrack-test",
    "instance-v2-id": "29bea708-2e6e-480a-90ad-0e6b5d5ad62f",
    "instance-id": "29bea708-2e6e-480a-90ad-0e6b5d5ad62f",
    "instanceid": "42506325",
    "interfaces": [],
    "public-keys": [],
    "region": {"regioncode": "AMS", "countrycode": "NL"},
    "user-defined": [],
}

ALICLOUD_META = {
    "instance/instance-type": "ecs.g7.large",
    "region-id": "cn-hangzhou",
    "zone-id": "cn-hangzhou-h",
    "owner-account-id": "1234567890123456",
    "instance-id": "i-bp1fakeinstance",
}

OVH_NETWORK = {
    "links": [{"id": "tap1", "type": "ovs", "ethernet_mac_address": "fa:16:3e:00:00:01"}],
    "networks": [{"id": "network0", "link": "tap1", "type": "ipv4_dhcp"}],
    "services": [{"type": "dns", "address": "213.186.33.99"}],
}
OVH_META = {
    "uuid": "6b0b2d6e-1111-2222-3333-444455556666",
    "hostname": "rtrack-test",
    "name": "rtrack-test",
    "availability_zone": "eu-west-par-a",
    "project_id": "0123456789abcdef0123456789abcdef",
    "launch_index": 0,
    "devices": [],
}
OVH_EC2 = {"instance-type": "b2-7", "instance-id": "i-00001234", "hostname": "rtrack-test"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):  # keep the test's output clean
        pass

    def record(self):
        if not self.server.log_path:
            return
        entry = {"method": self.command, "path": self.path,
                 "headers": {k.lower(): v for k, v in self.headers.items()}}
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def answer(self, status, body="", ctype="text/plain", extra=()):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): not an error here

    def json(self, obj, extra=()):
        self.answer(200, json.dumps(obj), "application/json", extra)

    def not_found(self, extra=()):
        self.answer(404, "Not Found", extra=extra)

    def hdr(self, name):
        return self.headers.get(name)

    # --- EC2-style services (AWS, its look-alike, AliCloud) --------------------------------
    def ec2_token(self, ttl_header, token):
        if self.hdr("X-Forwarded-For") is not None:  # AWS refuses proxied token requests
            return self.answer(403, "Forbidden")
        ttl = self.hdr(ttl_header)
        try:
            ok = ttl is not None and 1 <= int(ttl) <= 21600
        except ValueError:
            ok = False
        if not ok:
            return self.answer(400, "Bad Request")
        self.answer(200, token, extra=[(ttl_header, ttl)])

    def ec2_get(self, token_header, token, meta, identity=None):
        if self.hdr(token_header) != token:
            return self.answer(401, "Unauthorized")
        path = urlsplit(self.path).path
        if path.startswith("/latest/meta-data/"):
            key = path[len("/latest/meta-data/"):]
            if key in meta:
                return self.answer(200, meta[key])
        if identity is not None and path == "/latest/dynamic/instance-identity/document":
            return self.answer(200, json.dumps(identity, indent=2), "text/plain")
        self.not_found()

    def do_PUT(self):
        self.record()
        v = self.server.vendor
        if v == "slow":
            time.sleep(5)
        path = urlsplit(self.path).path
        if v in ("aws", "aws-lookalike") and path == "/latest/api/token":
            return self.ec2_token("X-aws-ec2-metadata-token-ttl-seconds", AWS_TOKEN)
        if v == "alicloud" and path == "/latest/api/token":
            return self.ec2_token("X-aliyun-ecs-metadata-token-ttl-seconds", ALI_TOKEN)
        if v == "gcp":
            return self.answer(405, "Method Not Allowed", extra=[("Metadata-Flavor", "Google")])
        self.answer(405 if v == "azure" else 404, "Not Found")

    def do_GET(self):
        self.record()
        v = self.server.vendor
        split = urlsplit(self.path)
        path = split.path
        if v == "slow":
            time.sleep(5)
            return self.not_found()
        if v == "aws":
            return self.ec2_get("X-aws-ec2-metadata-token", AWS_TOKEN, AWS_META, AWS_IDENTITY)
        if v == "aws-lookalike":
            return self.ec2_get("X-aws-ec2-metadata-token", AWS_TOKEN, LOOKALIKE_META,
                                dict(AWS_IDENTITY, accountId="999999999999"))
        if v == "alicloud":
            return self.ec2_get("X-aliyun-ecs-metadata-token", ALI_TOKEN, ALICLOUD_META)
        if v == "gcp":
            flavor = [("Metadata-Flavor", "Google")]
            if self.hdr("X-Forwarded-For") is not None or self.hdr("Metadata-Flavor") != "Google":
                return self.answer(403, "Missing Metadata-Flavor:Google header.", extra=flavor)
            prefix = "/computeMetadata/v1/"
            if path.startswith(prefix) and path[len(prefix):] in GCP:
                return self.answer(200, GCP[path[len(prefix):]], "application/text", flavor)
            return self.not_found(flavor)
        if v == "azure":
            if path != "/metadata/instance":
                return self.not_found()
            if self.hdr("Metadata") != "true":
                return self.answer(400, json.dumps({"error": "Bad request. Required metadata"
                                                    " header not specified"}), "application/json")
            if "api-version" not in parse_qs(split.query):
                return self.answer(400, json.dumps({"error": "Bad request. api-version was not"
                                                    " specified in the request."}),
                                   "application/json")
            return self.json(AZURE)
        if v == "hetzner":
            if path == "/hetzner/v1/metadata":
                return self.answer(200, HETZNER)
            if path == "/hetzner/v1/metadata/instance-id":
                return self.answer(200, "42424242")
            return self.not_found()
        if v == "upcloud":
            return self.json(UPCLOUD) if path == "/metadata/v1.json" else self.not_found()
        if v == "vultr":
            return self.json(VULTR) if path == "/v1.json" else self.not_found()
        if v == "ovh":
            if path == "/openstack/latest/network_data.json":
                return self.json(OVH_NETWORK)
            if path == "/openstack/latest/meta_data.json":
                return self.json(OVH_META)
            key = path[len("/latest/meta-data/"):] if path.startswith("/latest/meta-data/") else None
            if key in OVH_EC2:
                return self.answer(200, OVH_EC2[key])
            return self.not_found()
        self.not_found()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # All eight probes connect at once; socketserver's default backlog of 5 would drop SYNs
    # (retried by the kernel only after 1 s, past the probes' connect timeout).
    request_queue_size = 128


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in VENDORS:
        sys.exit("usage: imds_mock.py {" + "|".join(sorted(VENDORS)) + "} [LOGFILE]")
    srv = Server(("127.0.0.1", 0), Handler)
    srv.vendor = sys.argv[1]
    srv.log_path = sys.argv[2] if len(sys.argv) > 2 else None
    srv.log_lock = threading.Lock()
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
