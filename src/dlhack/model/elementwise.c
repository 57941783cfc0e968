/* One pass over memory for the fused translator's elementwise work (dlhack.model.ckernels
 * builds and loads it; dlhack.model.fused_lstm, packed_adam and fused call it).
 * Each function does what several numpy calls do, in the same arithmetic; built with
 * -O3 and -ffast-math's loop freedoms (ckernels.VECTORIZE: not -ffast-math itself, which
 * would flush subnormals to zero in the whole process), so that the loops vectorize, exp_ included. */
#include <math.h>
#include <float.h>
#include <stddef.h>

/* e^x in float32 to about an ulp: e^r for |r| <= ln(2) / 2 by the polynomial of Cephes'
 * expf, times 2^n. Inline, so that it vectorizes with the loop (a call to libm's expf does
 * not, and glibc's vector expf needs libmvec); clamped, so that 2^n stays a normal float. */
static inline float exp_(float x)
{
    x = fminf(fmaxf(x, -87.0f), 88.0f);
    float n = floorf(x * 1.44269504088896341f + 0.5f);      /* x / ln 2, rounded */
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;     /* x - n ln 2, in two parts */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { int i; float f; } two_n = { ((int)n + 127) << 23 };
    return p * two_n.f;
}

static inline float sigm(float z) { return 1.0f / (1.0f + exp_(-z)); }
static inline float tanh_(float z) { return 1.0f - 2.0f / (1.0f + exp_(2.0f * z)); }

/* One LSTM step over n rows. g (n, 4H): the input projections [i f a o] of the step's tokens,
 * overwritten with the activated gates; r (n, 4H) the recurrent products; b (4H,) the bias;
 * c_prev (n, H) the previous cells (row stride ld_prev); writes c and h (n, H). The sigmoid and
 * tanh are written with exp_, saturating to 0 and 1 (or -1) far from 0, never a NaN. */
void lstm_forward_step(long n, long H, float *restrict g, const float *restrict r,
                       const float *restrict b, const float *restrict c_prev, long ld_prev,
                       float *restrict c, float *restrict h)
{
    for (long row = 0; row < n; row++) {
        float *gi = g + row * 4 * H, *gf = gi + H, *ga = gi + 2 * H, *go = gi + 3 * H;
        const float *ri = r + row * 4 * H, *cp = c_prev + row * ld_prev;
        float *cr = c + row * H, *hr = h + row * H;
        for (long j = 0; j < H; j++) {
            float i = sigm(gi[j] + ri[j] + b[j]);
            float f = sigm(gf[j] + ri[H + j] + b[H + j]);
            float a = tanh_(ga[j] + ri[2 * H + j] + b[2 * H + j]);
            float o = sigm(go[j] + ri[3 * H + j] + b[3 * H + j]);
            float cc = i * a + f * cp[j];
            gi[j] = i; gf[j] = f; ga[j] = a; go[j] = o;
            cr[j] = cc;
            hr[j] = o * tanh_(cc);
        }
    }
}

/* One row of lstm_backward_step: every pointer its own (restrict), so that the loop vectorizes
 * without checks of overlap between the gates' blocks. */
static void backward_row(long H, float *restrict gi, float *restrict gf, float *restrict ga,
                         float *restrict go, float *restrict c, const float *restrict cp,
                         const float *restrict dh, float *restrict dc, float *restrict bi,
                         float *restrict bf, float *restrict ba, float *restrict bo)
{
    for (long j = 0; j < H; j++) {
        float i = gi[j], f = gf[j], a = ga[j], o = go[j];
        float tc = tanh_(c[j]);
        float d_c = dc[j] + dh[j] * o * (1.0f - tc * tc);
        float d_i = d_c * a * i * (1.0f - i), d_f = d_c * cp[j] * f * (1.0f - f);
        float d_a = d_c * i * (1.0f - a * a), d_o = dh[j] * tc * o * (1.0f - o);
        gi[j] = d_i; gf[j] = d_f; ga[j] = d_a; go[j] = d_o;
        dc[j] = d_c * f;
        c[j] = o * tc;  /* the output h, over the cell: read already (the next step's c_prev) */
        bi[j] += d_i; bf[j] += d_f; ba[j] += d_a; bo[j] += d_o;
    }
}

/* One LSTM step backward over n rows. g (n, 4H): the step's activated gates, overwritten with
 * the gradients of their pre-activations; c (n, H) the step's cells, overwritten with its
 * outputs h = o tanh(c) (steps run backward: a later step has read them as c_prev already),
 * so that the outputs need not be kept from the forward; c_prev its previous cells
 * (row stride ld_prev); dh, dc (n, H): the gradients reaching the step's outputs h and cells
 * (g_hs (n, H), or NULL: more gradient for h, added into dh); dc leaves as the previous cells'.
 * db (4H,) sums the gradients of the pre-activations: the bias's gradient. tanh(c) is computed
 * again here rather than kept from the forward: (N, H) less memory. */
void lstm_backward_step(long n, long H, float *g, float *c, const float *c_prev,
                        long ld_prev, float *dh, const float *g_hs, float *dc, float *db)
{
    for (long row = 0; row < n; row++) {
        float *gr = g + row * 4 * H, *dhr = dh + row * H;
        if (g_hs)
            for (long j = 0; j < H; j++)
                dhr[j] += g_hs[row * H + j];
        backward_row(H, gr, gr + H, gr + 2 * H, gr + 3 * H, c + row * H,
                     c_prev + row * ld_prev, dhr, dc + row * H, db, db + H, db + 2 * H,
                     db + 3 * H);
    }
}

/* The cells of a layer again, from its activated gates g (N, 4H) [i f a o], over its steps:
 * step t's n_t rows are offsets[t] to offsets[t + 1] of g and c (N, H); c_t = i a + f c_{t-1},
 * c0 (rows, H) before the first step. What the backward needs, one call per layer. */
void lstm_cells(long steps, const long *offsets, long H, const float *restrict g,
                const float *restrict c0, float *restrict c)
{
    for (long t = 0; t < steps; t++)
        for (long row = 0; row < offsets[t + 1] - offsets[t]; row++) {
            const float *gr = g + (offsets[t] + row) * 4 * H;
            const float *cp = t == 0 ? c0 + row * H : c + (offsets[t - 1] + row) * H;
            float *cr = c + (offsets[t] + row) * H;
            for (long j = 0; j < H; j++)
                cr[j] = gr[j] * gr[2 * H + j] + gr[H + j] * cp[j];
        }
}

/* keep[k] = 1 where a hash of k and key is at least threshold, for k < n: a dropout mask that
 * keeps each unit with probability 1 - threshold / 2^32 (key and threshold: 32-bit). The hash:
 * k times an odd constant, key xor-ed in, then MurmurHash3's 32-bit finalizer (a bijection that
 * spreads each input bit over the output). dropout_mask.draw computes the same in numpy. */
void dropout_keep(long n, long key, long threshold, unsigned char *restrict keep)
{
    unsigned int key32 = (unsigned int)key, at_least = (unsigned int)threshold;
    for (long k = 0; k < n; k++) {
        unsigned int x = ((unsigned int)k * 0x9E3779B9u) ^ key32;
        x ^= x >> 16;
        x *= 0x85EBCA6Bu;
        x ^= x >> 13;
        x *= 0xC2B2AE35u;
        x ^= x >> 16;
        keep[k] = x >= at_least;
    }
}

/* out = x keep scale over n elements, in numpy's order ((x keep) scale: the same bits); keep
 * holds 0 or 1 bytes (a boolean mask); out may be x. A dropout mask applied in one pass. */
void dropout_apply(long n, const float *x, const unsigned char *restrict keep, float scale,
                   float *out)
{
    for (long k = 0; k < n; k++)
        out[k] = x[k] * (float)keep[k] * scale;
}

/* Softmax cross-entropy of n rows of V logits z (in place), bias b (V,) added: adds each row
 * whose target t[row] is not negative (PAD: padding) -log softmax(z)[t] into *loss; with
 * grads, leaves z as the gradient of that sum, softmax minus one-hot (zero rows for padding).
 * The same steps as fused_output's numpy: less the row's maximum, exp, sum, log. */
void softmax_xent_rows(long n, long V, float *restrict z, const float *restrict b,
                       const int *restrict t, long grads, double *restrict loss)
{
    for (long row = 0; row < n; row++) {
        float *r = z + row * V, top = -FLT_MAX, total = 0.0f;
        for (long j = 0; j < V; j++) {
            r[j] += b[j];
            top = fmaxf(top, r[j]);
        }
        float picked = t[row] >= 0 ? r[t[row]] - top : 0.0f;
        for (long j = 0; j < V; j++) {
            r[j] = exp_(r[j] - top);
            total += r[j];
        }
        if (t[row] >= 0)
            *loss += (double)(logf(total) - picked);
        if (!grads)
            continue;
        float scale = t[row] >= 0 ? 1.0f / total : 0.0f;
        for (long j = 0; j < V; j++)
            r[j] *= scale;
        if (t[row] >= 0)
            r[t[row]] -= 1.0f;
    }
}

/* Adam on n elements, in place: m += (1 - beta1)(g - m); v += (1 - beta2)(g^2 - v);
 * p -= step / (sqrt(v) + eps) * m, step = eta * alpha_t. */
void adam_update(long n, float *restrict p, const float *restrict g, float *restrict m,
                 float *restrict v, float one_minus_beta1, float one_minus_beta2, float step,
                 float eps)
{
    for (long k = 0; k < n; k++) {
        float mk = m[k] + one_minus_beta1 * (g[k] - m[k]);
        float vk = v[k] + one_minus_beta2 * (g[k] * g[k] - v[k]);
        m[k] = mk;
        v[k] = vk;
        p[k] -= step / (sqrtf(vk) + eps) * mk;
    }
}

/* adam_update on elements [offset, offset + n) of the buffers (p, m and v point at element
 * offset), the gradient being the sum of count >= 1 flat arrays, slots[0] + slots[1] + ...
 * added in that order: the sharded update's chunk, whose gradient is every rank's slot. The sum
 * goes a block at a time into a buffer that stays in the L1 cache. */
#define SUM_BLOCK 2048
void adam_update_sum(long n, long count, const float *const *slots, long offset,
                     float *restrict p, float *restrict m, float *restrict v,
                     float one_minus_beta1, float one_minus_beta2, float step, float eps)
{
    float g[SUM_BLOCK];
    for (long start = 0; start < n; start += SUM_BLOCK) {
        long len = n - start < SUM_BLOCK ? n - start : SUM_BLOCK;
        const float *first = slots[0] + offset + start;
        for (long k = 0; k < len; k++)
            g[k] = first[k];
        for (long s = 1; s < count; s++) {
            const float *slot = slots[s] + offset + start;
            for (long k = 0; k < len; k++)
                g[k] += slot[k];
        }
        adam_update(len, p + start, g, m + start, v + start, one_minus_beta1, one_minus_beta2,
                    step, eps);
    }
}

/* out[index[j]] += rows[j] for j < n, rows of `width` floats: an embedding's backward (numpy's
 * add.at does the same about 20 times slower). */
void scatter_add_rows(long n, long width, const long *restrict index, const float *restrict rows,
                      float *restrict out)
{
    for (long j = 0; j < n; j++) {
        float *o = out + index[j] * width;
        const float *r = rows + j * width;
        for (long k = 0; k < width; k++)
            o[k] += r[k];
    }
}
