/*
 * png.c - the latency histograms of svg.c as PNG images, for places that show
 * pictures but not SVG (issue trackers, slides). The image is drawn into an
 * RGB buffer and written with zlib alone (PNG is deflate plus CRCs), so no
 * imaging library is needed. Only tick labels are drawn, with a built-in 5x7
 * font of the characters numbers need; the file name names the hop, x is
 * latency in ms and y the count, as in the SVG.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "analyze.h"
#include "ripple/ripple.h"

enum { PW = 640, PH = 400, PL = 70, PR = 20, PT = 20, PB = 40, FS = 2 };

typedef struct img {
  unsigned char px[PH][PW][3];
} img_t;

static void fill(img_t *im, int x0, int y0, int x1, int y1, unsigned rgb) {
  for (int y = y0 < 0 ? 0 : y0; y < y1 && y < PH; y++)
    for (int x = x0 < 0 ? 0 : x0; x < x1 && x < PW; x++) {
      im->px[y][x][0] = (unsigned char)(rgb >> 16);
      im->px[y][x][1] = (unsigned char)(rgb >> 8);
      im->px[y][x][2] = (unsigned char)rgb;
    }
}

/* Rows top to bottom, the leftmost pixel in bit 4. */
static const char glyph_chars[] = "0123456789.-+e";
static const unsigned char glyphs[][7] = {
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}, {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}, {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}, {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}, {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}, {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00},
    {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}, {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E},
};

/* Text whose right edge (right=1) or centre (right=0) is at x. */
static void text(img_t *im, int x, int y, const char *s, int right) {
  int w = (int)strlen(s) * 6 * FS;
  x -= right ? w : w / 2;
  for (; *s; s++, x += 6 * FS) {
    const char *g = strchr(glyph_chars, *s);
    if (!g) continue;
    const unsigned char *rows = glyphs[g - glyph_chars];
    for (int r = 0; r < 7; r++)
      for (int c = 0; c < 5; c++)
        if (rows[r] & (0x10 >> c))
          fill(im, x + c * FS, y + r * FS, x + (c + 1) * FS, y + (r + 1) * FS, 0x000000);
  }
}

static void draw(img_t *im, const size_t *bins, size_t ymax, double lo, double hi) {
  int w = PW - PL - PR, h = PH - PT - PB;
  fill(im, 0, 0, PW, PH, 0xFFFFFF);
  for (int b = 0; b < HIST_BINS; b++) {
    int x0 = PL + w * b / HIST_BINS, x1 = PL + w * (b + 1) / HIST_BINS - 1;
    int bh = (int)((double)h * (double)bins[b] / (double)ymax);
    fill(im, x0, PT + h - bh, x1, PT + h, 0x4878A8);
  }
  fill(im, PL, PT + h, PL + w, PT + h + 1, 0x000000);
  fill(im, PL, PT, PL + 1, PT + h, 0x000000);
  for (int i = 0; i <= 4; i++) {
    char buf[32];
    int x = PL + w * i / 4, y = PT + h - h * i / 4;
    fill(im, x, PT + h, x + 1, PT + h + 5, 0x000000);
    fill(im, PL - 5, y, PL, y + 1, 0x000000);
    snprintf(buf, sizeof buf, "%.3g", lo + (hi - lo) * i / 4.0);
    text(im, x, PT + h + 10, buf, 0);
    snprintf(buf, sizeof buf, "%zu", ymax * (size_t)i / 4);
    text(im, PL - 8, y - 7, buf, 1);
  }
}

static void chunk(FILE *f, const char *type, const unsigned char *data, size_t len) {
  unsigned char be[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
                         (unsigned char)(len >> 8), (unsigned char)len};
  fwrite(be, 1, 4, f);
  fwrite(type, 1, 4, f);
  if (len) fwrite(data, 1, len, f);
  uLong crc = crc32(0, (const Bytef *)type, 4);
  if (len) crc = crc32(crc, data, (uInt)len);
  unsigned char c[4] = {(unsigned char)(crc >> 24), (unsigned char)(crc >> 16),
                        (unsigned char)(crc >> 8), (unsigned char)crc};
  fwrite(c, 1, 4, f);
}

static int write_png(const char *path, const img_t *im) {
  size_t rowlen = 1 + (size_t)PW * 3, rawlen = rowlen * PH;
  unsigned char *raw = malloc(rawlen);
  uLongf zlen = compressBound((uLong)rawlen);
  unsigned char *z = malloc(zlen);
  int rc = raw && z ? RIPPLE_OK : RIPPLE_ENOMEM;
  if (rc == RIPPLE_OK) {
    for (int y = 0; y < PH; y++) {
      raw[rowlen * (size_t)y] = 0; /* filter: none */
      memcpy(raw + rowlen * (size_t)y + 1, im->px[y], (size_t)PW * 3);
    }
    if (compress2(z, &zlen, raw, (uLong)rawlen, 9) != Z_OK) rc = RIPPLE_ENOMEM;
  }
  FILE *f = rc == RIPPLE_OK ? fopen(path, "wb") : NULL;
  if (rc == RIPPLE_OK && !f) rc = RIPPLE_ESYS;
  if (f) {
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    const unsigned char ihdr[13] = {0,         0, PW >> 8, PW & 0xFF, 0, 0, PH >> 8,
                                    PH & 0xFF, 8, 2,       0,         0, 0}; /* 8-bit RGB */
    fwrite(sig, 1, sizeof sig, f);
    chunk(f, "IHDR", ihdr, sizeof ihdr);
    chunk(f, "IDAT", z, zlen);
    chunk(f, "IEND", NULL, 0);
    if (ferror(f)) rc = RIPPLE_ESYS;
    if (fclose(f) != 0) rc = RIPPLE_ESYS;
  }
  free(raw);
  free(z);
  return rc;
}

static int hist_png(const char *path, const hop_result_t *res, hop_id_t h, img_t *im) {
  hop_hist_t hist;
  hop_hist(res, h, &hist);
  draw(im, hist.bins, hist.ymax, hist.lo, hist.hi);
  return write_png(path, im);
}

int report_png(const char *dir, const hop_result_t *res) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return RIPPLE_ESYS;
  img_t *im = malloc(sizeof *im);
  if (!im) return RIPPLE_ENOMEM;
  int rc = RIPPLE_OK;
  for (int h = 0; h < HOP_COUNT && rc == RIPPLE_OK; h++) {
    if (!res->stats[h].count) continue;
    char path[4096];
    report_file_name(path, sizeof path, dir, hop_name((hop_id_t)h), ".png");
    rc = hist_png(path, res, (hop_id_t)h, im);
  }
  free(im);
  return rc;
}
