#!/bin/sh
# Makes throwaway TLS material for the tests in DIR (which must exist):
#   ca.crt ca.key          the test CA
#   server.crt server.key  signed by it, for localhost and 127.0.0.1
#   client.crt client.key  signed by it, for client authentication
#   other-ca.crt           an unrelated CA (a client trusting only it
#                          must refuse the server)
#   name-only.crt .key     signed by it, for the name localhost only
#   ip-only.crt .key       signed by it, for the address 127.0.0.1 only
#                          (which name a client checks shows: a server
#                          with one of them refuses the other name)
#   cadir/                 ca.crt in a hashed CA directory
# EC P-256 keys, valid two days. Usage: tests/shared/tls_certs.sh DIR
set -eu
d=$1
cd "$d"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key ca.key
openssl req -x509 -new -key ca.key -out ca.crt -days 2 -subj "/CN=redlock test CA" 2>/dev/null
key other-ca.key
openssl req -x509 -new -key other-ca.key -out other-ca.crt -days 2 -subj "/CN=redlock other CA" 2>/dev/null
sign() { # name subject extensions
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 2 \
    -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
sign server "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
sign client "/CN=redlock test client" "extendedKeyUsage=clientAuth"
sign name-only "/CN=redlock name-only" "subjectAltName=DNS:localhost"
sign ip-only "/CN=redlock ip-only" "subjectAltName=IP:127.0.0.1"
mkdir -p cadir
cp ca.crt cadir/
openssl rehash cadir 2>/dev/null || c_rehash cadir >/dev/null 2>&1
