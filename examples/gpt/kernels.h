// The layers' arithmetic, forward and backward, on plain row-major arrays.
//
// Every function is instantiated for float (training) and double (the
// gradient check's reference). Loops run in one fixed order, so results are
// bitwise reproducible for a given build.
//
// Convention: backward functions ADD to every gradient they write (inputs
// and parameters alike); the caller zeroes them first. Residual connections
// and gradient accumulation over micro-batches then need no extra code.
// `n` is the number of rows (tokens) in a batch.
#pragma once

#include <cstdint>

namespace trainmover::gpt {

// y[n, out] = x[n, in] w[in, out] + b[out]
template <typename T>
void linear_forward(const T* x, const T* w, const T* b, T* y, int n, int in, int out);
// dx += dy w^T; dw += x^T dy; db += sum over rows of dy. dx may be null.
template <typename T>
void linear_backward(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, int n, int in,
                     int out);

// y = (x - mean) * rstd * g + b per row of c; keeps mean and rstd per row.
template <typename T>
void layernorm_forward(const T* x, const T* g, const T* b, T* y, T* mean, T* rstd, int n, int c);
template <typename T>
void layernorm_backward(const T* x, const T* g, const T* mean, const T* rstd, const T* dy, T* dx,
                        T* dg, T* db, int n, int c);

// GELU, tanh approximation, elementwise over `count` values.
template <typename T>
void gelu_forward(const T* x, T* y, int64_t count);
template <typename T>
void gelu_backward(const T* x, const T* dy, T* dx, int64_t count);

// Causal multi-head attention. qkv is [batch*seq, 3c]: q, k, v side by side,
// head h in columns [h*d, (h+1)*d) of each. out is [batch*seq, c]. probs
// keeps the softmax, [batch, heads, seq, seq] (upper triangle unused).
struct AttentionShape {
  int batch, seq, c, heads;
};
template <typename T>
void attention_forward(const T* qkv, T* out, T* probs, const AttentionShape& s);
template <typename T>
void attention_backward(const T* qkv, const T* probs, const T* dout, T* dqkv,
                        const AttentionShape& s);

// x[b*seq + t] = tok[tokens[b*seq + t]] + pos[t], rows of c.
template <typename T>
void embedding_forward(const int32_t* tokens, const T* tok, const T* pos, T* x, int n, int seq,
                       int c);
template <typename T>
void embedding_backward(const int32_t* tokens, const T* dx, T* dtok, T* dpos, int n, int seq,
                        int c);

// Softmax cross-entropy over rows of v logits: returns the sum over rows of
// -log p[target]; keeps p in probs.
template <typename T>
T cross_entropy_forward(const T* logits, const int32_t* targets, T* probs, int n, int v);
// dlogits += scale * (p - onehot(target)).
template <typename T>
void cross_entropy_backward(const T* probs, const int32_t* targets, T scale, T* dlogits, int n,
                            int v);

}  // namespace trainmover::gpt
