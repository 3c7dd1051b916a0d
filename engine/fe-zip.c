/* fe-zip.c - just enough ZIP for torch.save() archives: the central directory
 * (zip64 too, which torch writes for large files), stored entries located in
 * place. Compression is never needed for .pt files and is refused by the
 * caller with the entry's name. */
#include "fe-weights-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FE_ZIP_EOCD_SIG 0x06054b50u
#define FE_ZIP64_LOCATOR_SIG 0x07064b50u
#define FE_ZIP64_EOCD_SIG 0x06064b50u
#define FE_ZIP_CENTRAL_SIG 0x02014b50u
#define FE_ZIP_LOCAL_SIG 0x04034b50u

static uint16_t fe_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t fe_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t fe_le64(const uint8_t *p) {
    return (uint64_t)fe_le32(p) | ((uint64_t)fe_le32(p + 4) << 32);
}

void fe_zip_close(FeZipArchive *zip) {
    if (!zip)
        return;
    for (size_t i = 0; i < zip->n_entries; i++)
        free(zip->entries[i].name);
    free(zip->entries);
    zip->entries = NULL;
    zip->n_entries = 0;
}

const FeZipEntry *fe_zip_find(const FeZipArchive *zip, const char *name) {
    for (size_t i = 0; i < zip->n_entries; i++)
        if (strcmp(zip->entries[i].name, name) == 0)
            return &zip->entries[i];
    return NULL;
}

/* Replaces the 0xFFFFFFFF placeholders of a central record from its zip64
 * extra field, which lists only the replaced values, in this order. */
static fe_status fe_zip64_extra(const uint8_t *extra, size_t extra_len, const char *name,
                                uint64_t *usize, uint64_t *csize, uint64_t *offset) {
    size_t pos = 0;
    while (pos + 4 <= extra_len) {
        uint16_t id = fe_le16(extra + pos), size = fe_le16(extra + pos + 2);
        const uint8_t *field = extra + pos + 4;
        size_t used = 0;
        if (pos + 4 + size > extra_len)
            break;
        if (id == 0x0001) {
            uint64_t *slots[3] = {usize, csize, offset};
            for (int i = 0; i < 3; i++) {
                if (*slots[i] != 0xFFFFFFFFu)
                    continue;
                if (used + 8 > size)
                    return fe_set_error(FE_ERR_FORMAT, "zip entry '%.80s': short zip64 field",
                                        name);
                *slots[i] = fe_le64(field + used);
                used += 8;
            }
            return FE_OK;
        }
        pos += 4 + (size_t)size;
    }
    if (*usize == 0xFFFFFFFFu || *csize == 0xFFFFFFFFu || *offset == 0xFFFFFFFFu)
        return fe_set_error(FE_ERR_FORMAT, "zip entry '%.80s': no zip64 field for its sizes",
                            name);
    return FE_OK;
}

static fe_status fe_zip_entry(const uint8_t *data, size_t len, const uint8_t *rec,
                              size_t rec_avail, size_t *rec_size, FeZipEntry *e) {
    uint16_t flags, method, name_len, extra_len, comment_len;
    uint64_t csize, usize, local;
    size_t data_start;
    char *name;

    if (rec_avail < 46 || fe_le32(rec) != FE_ZIP_CENTRAL_SIG)
        return fe_set_error(FE_ERR_FORMAT, "zip central directory is damaged");
    flags = fe_le16(rec + 8);
    method = fe_le16(rec + 10);
    csize = fe_le32(rec + 20);
    usize = fe_le32(rec + 24);
    name_len = fe_le16(rec + 28);
    extra_len = fe_le16(rec + 30);
    comment_len = fe_le16(rec + 32);
    local = fe_le32(rec + 42);
    *rec_size = 46u + name_len + extra_len + comment_len;
    if (*rec_size > rec_avail)
        return fe_set_error(FE_ERR_FORMAT, "zip central directory is truncated");
    if (memchr(rec + 46, '\0', name_len))
        return fe_set_error(FE_ERR_FORMAT, "zip entry name contains a NUL byte");
    name = malloc((size_t)name_len + 1);
    if (!name)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory reading the zip directory");
    memcpy(name, rec + 46, name_len);
    name[name_len] = '\0';
    e->name = name;
    e->method = method;
    FE_TRY(fe_zip64_extra(rec + 46 + name_len, extra_len, name, &usize, &csize, &local));
    if (flags & 0x0001)
        return fe_set_error(FE_ERR_UNSUPPORTED, "zip entry '%.80s' is encrypted", name);
    if (local > len || len - local < 30 || fe_le32(data + local) != FE_ZIP_LOCAL_SIG)
        return fe_set_error(FE_ERR_FORMAT, "zip entry '%.80s': local header missing or damaged",
                            name);
    data_start = (size_t)local + 30 + fe_le16(data + local + 26) + fe_le16(data + local + 28);
    if (data_start > len || csize > len - data_start)
        return fe_set_error(FE_ERR_FORMAT,
                            "zip entry '%.80s' runs past the end of the file (truncated?)", name);
    if (method == 0 && csize != usize)
        return fe_set_error(FE_ERR_FORMAT,
                            "zip entry '%.80s' is stored but its sizes differ (%llu vs %llu)",
                            name, (unsigned long long)csize, (unsigned long long)usize);
    e->data = data + data_start;
    e->size = method == 0 ? usize : csize;
    return FE_OK;
}

fe_status fe_zip_open(const uint8_t *data, size_t len, FeZipArchive *out) {
    size_t eocd = SIZE_MAX;
    uint64_t n_entries, cd_size, cd_offset;
    size_t pos;
    fe_status st = FE_OK;

    memset(out, 0, sizeof *out);
    if (len < 22)
        return fe_set_error(FE_ERR_FORMAT, "truncated zip archive (%zu bytes)", len);
    /* The end record sits in the last 22 + 65535 (comment) bytes. */
    for (size_t i = len - 22 + 1; i-- > 0 && len - i <= 22 + 65535;) {
        if (fe_le32(data + i) == FE_ZIP_EOCD_SIG && i + 22 + fe_le16(data + i + 20) <= len) {
            eocd = i;
            break;
        }
    }
    if (eocd == SIZE_MAX)
        return fe_set_error(FE_ERR_FORMAT,
                            "zip end-of-directory record not found (truncated archive?)");
    if (fe_le16(data + eocd + 4) != 0 || fe_le16(data + eocd + 6) != 0)
        return fe_set_error(FE_ERR_UNSUPPORTED, "multi-part zip archives are not supported");
    n_entries = fe_le16(data + eocd + 10);
    cd_size = fe_le32(data + eocd + 12);
    cd_offset = fe_le32(data + eocd + 16);
    if (n_entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
        size_t loc, e64;
        uint64_t e64_offset;
        if (eocd < 20 || fe_le32(data + eocd - 20) != FE_ZIP64_LOCATOR_SIG)
            return fe_set_error(FE_ERR_FORMAT, "zip64 locator missing");
        loc = eocd - 20;
        e64_offset = fe_le64(data + loc + 8);
        if (e64_offset > loc || loc - e64_offset < 56 ||
            fe_le32(data + e64_offset) != FE_ZIP64_EOCD_SIG)
            return fe_set_error(FE_ERR_FORMAT, "zip64 end-of-directory record damaged");
        e64 = (size_t)e64_offset;
        n_entries = fe_le64(data + e64 + 32);
        cd_size = fe_le64(data + e64 + 40);
        cd_offset = fe_le64(data + e64 + 48);
    }
    if (cd_offset > len || cd_size > len - cd_offset)
        return fe_set_error(FE_ERR_FORMAT,
                            "zip central directory lies outside the file (truncated archive?)");
    if (n_entries > cd_size / 46)
        return fe_set_error(FE_ERR_FORMAT, "zip directory claims %llu entries in %llu bytes",
                            (unsigned long long)n_entries, (unsigned long long)cd_size);
    out->entries = calloc(n_entries ? (size_t)n_entries : 1, sizeof *out->entries);
    if (!out->entries)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory reading the zip directory");
    pos = (size_t)cd_offset;
    for (uint64_t i = 0; i < n_entries && st == FE_OK; i++) {
        size_t rec_size = 0;
        st = fe_zip_entry(data, len, data + pos, (size_t)(cd_offset + cd_size - pos), &rec_size,
                          &out->entries[i]);
        out->n_entries = (size_t)i + 1;
        pos += rec_size;
    }
    if (st != FE_OK)
        fe_zip_close(out);
    return st;
}
