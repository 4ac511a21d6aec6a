"""corpus_certs.py: a CA and one certificate per host, for an HTTPS origin.

usage: python3 corpus_certs.py DIR HOSTS_FILE

Writes DIR/ca.pem (a self-signed ECDSA P-256 CA, valid two days),
DIR/leaf.key (one P-256 key that every host certificate shares) and
DIR/certs/HOST.pem for each host name of HOSTS_FILE (one a line): a
certificate for that name alone, signed by the CA. nginx picks the file
by SNI (ssl_certificate .../$ssl_server_name.pem), so that robotsd
verifies each origin against a certificate of normal size, as on the
web, with the CA given by --ca-file.
"""
import datetime
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def main():
    out, hosts_file = sys.argv[1], sys.argv[2]
    now = datetime.datetime.now(datetime.timezone.utc)
    since, until = now - datetime.timedelta(hours=1), \
        now + datetime.timedelta(days=2)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                            "robotsd bench CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name)
          .issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(since).not_valid_after(until)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0),
                         critical=True)
          .sign(ca_key, hashes.SHA256()))
    with open(os.path.join(out, "ca.pem"), "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    with open(os.path.join(out, "leaf.key"), "wb") as f:
        f.write(pem_key(leaf_key))
    os.makedirs(os.path.join(out, "certs"), exist_ok=True)
    for serial, host in enumerate(open(hosts_file).read().split(), 2):
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(
                    NameOID.COMMON_NAME, host)]))
                .issuer_name(ca_name).public_key(leaf_key.public_key())
                .serial_number(serial).not_valid_before(since)
                .not_valid_after(until)
                .add_extension(x509.SubjectAlternativeName(
                    [x509.DNSName(host)]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        with open(os.path.join(out, "certs", host + ".pem"), "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))


main()
