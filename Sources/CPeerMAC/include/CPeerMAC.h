// SPDX-License-Identifier: Apache-2.0
// HKDF-SHA256 and HMAC-SHA256 for the peer protocol, from the system's libcrypto (OpenSSL).
// Only plain C types here: no OpenSSL type reaches a Swift module.

#ifndef SPRINTGATE_CPEERMAC_H
#define SPRINTGATE_CPEERMAC_H

#include <stddef.h>
#include <stdint.h>

/// Bytes of an HMAC-SHA256 tag.
#define SG_HMAC_SHA256_LENGTH 32

/// HKDF (RFC 5869) with SHA-256: `out_len` bytes of key from `ikm`, `salt` and `info`.
/// Returns 0 on success, -1 when libcrypto fails (out of memory, or `out_len` above 8160).
int sg_hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
                   const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len);

/// HMAC-SHA256 (RFC 2104) of `message` under `key` into `out`, which holds
/// SG_HMAC_SHA256_LENGTH bytes. Returns 0 on success, -1 when libcrypto fails.
int sg_hmac_sha256(const uint8_t *key, size_t key_len, const void *message, size_t message_len,
                   uint8_t *out);

#endif
