// SPDX-License-Identifier: Apache-2.0
// HKDF-SHA256 and HMAC-SHA256 through OpenSSL 3's EVP interfaces.

#include "CPeerMAC.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

int sg_hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
                   const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    if (ctx == NULL) return -1;
    size_t length = out_len;
    int ok = EVP_PKEY_derive_init(ctx) > 0
        && EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0
        && EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, (int)salt_len) > 0
        && EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, (int)ikm_len) > 0
        && EVP_PKEY_CTX_add1_hkdf_info(ctx, info, (int)info_len) > 0
        && EVP_PKEY_derive(ctx, out, &length) > 0
        && length == out_len;
    EVP_PKEY_CTX_free(ctx);
    return ok ? 0 : -1;
}

int sg_hmac_sha256(const uint8_t *key, size_t key_len, const void *message, size_t message_len,
                   uint8_t *out) {
    unsigned int length = 0;
    // Why a message of no bytes gets a pointer of its own: HMAC() takes NULL as "no data"
    // in some versions and as an error in others.
    static const uint8_t nothing = 0;
    const unsigned char *data = message_len == 0 ? &nothing : (const unsigned char *)message;
    if (HMAC(EVP_sha256(), key, (int)key_len, data, message_len, out, &length) == NULL) return -1;
    return length == SG_HMAC_SHA256_LENGTH ? 0 : -1;
}
