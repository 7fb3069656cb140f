#include "triton_emu/gemm/held_gemms.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <future>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/gemm/gemm_worker_pool.hpp"

namespace cubesim::detail {

std::uint64_t HeldProduct::out_bytes() const {
  return static_cast<std::uint64_t>(m * n) * dtype_size(out_dtype);
}

namespace {

// One backend GEMM: the A blocks stacked (rows of op(A)), the B blocks side by side (columns
// of op(B)); products[i * bs.size() + j] use A block i and B block j.
struct Rectangle {
  std::vector<const MatrixAt*> as, bs;
  std::vector<std::vector<HeldProduct*>> products;
  std::vector<std::int64_t> row0, col0;
  std::vector<std::byte> a, b, c;
  backends::GemmDesc d;
};

// A product with transposed operands: a rectangle of one, operands as stored.
Rectangle single(HeldProduct* p) {
  Rectangle r;
  r.as = {&p->a};
  r.bs = {&p->b};
  r.products = {{p}};
  return r;
}

void gather(FunctionalMemory& mem, Rectangle& r) {
  std::vector<std::byte> scratch;
  const HeldProduct& first = *r.products.front().front();
  backends::GemmDesc& d = r.d;
  d.in_dtype = first.a.dtype;
  d.out_dtype = first.out_dtype;
  d.trans_a = first.trans_a;
  d.trans_b = first.trans_b;
  d.K = first.k;
  const std::uint32_t in = dtype_size(d.in_dtype);
  if (r.as.size() == 1 && r.bs.size() == 1) {  // as stored (transposes allowed)
    const MatrixAt &a = *r.as[0], &b = *r.bs[0];
    d.M = first.m;
    d.N = first.n;
    r.a.resize(static_cast<std::size_t>(a.rows * a.cols) * in);
    r.b.resize(static_cast<std::size_t>(b.rows * b.cols) * in);
    read_matrix(mem, a, r.a.data(), a.cols, scratch);
    read_matrix(mem, b, r.b.data(), b.cols, scratch);
    d.lda = a.cols;
    d.ldb = b.cols;
    r.row0 = {0};
    r.col0 = {0};
  } else {  // no transposes: A blocks are m x K, B blocks K x n
    d.M = d.N = 0;
    for (const MatrixAt* a : r.as) {
      r.row0.push_back(d.M);
      d.M += a->rows;
    }
    for (const MatrixAt* b : r.bs) {
      r.col0.push_back(d.N);
      d.N += b->cols;
    }
    r.a.resize(static_cast<std::size_t>(d.M * d.K) * in);
    r.b.resize(static_cast<std::size_t>(d.K * d.N) * in);
    for (std::size_t i = 0; i < r.as.size(); ++i)
      read_matrix(mem, *r.as[i], r.a.data() + r.row0[i] * d.K * in, d.K, scratch);
    for (std::size_t j = 0; j < r.bs.size(); ++j)
      read_matrix(mem, *r.bs[j], r.b.data() + r.col0[j] * in, d.N, scratch);
    d.lda = d.K;
    d.ldb = d.N;
  }
  r.c.resize(static_cast<std::size_t>(d.M * d.N) * dtype_size(d.out_dtype));
  d.a = r.a.data();
  d.b = r.b.data();
  d.c = r.c.data();
  d.ldc = d.N;
}

// Each product's block of the rectangle's C.
void scatter(Rectangle& r) {
  const std::uint32_t size = dtype_size(r.d.out_dtype);
  for (std::size_t i = 0; i < r.as.size(); ++i)
    for (std::size_t j = 0; j < r.bs.size(); ++j)
      for (HeldProduct* p : r.products[i * r.bs.size() + j]) {
        const auto row_bytes = static_cast<std::size_t>(p->n) * size;
        p->result.resize(static_cast<std::size_t>(p->m) * row_bytes);
        for (std::int64_t row = 0; row < p->m; ++row)
          std::memcpy(p->result.data() + static_cast<std::size_t>(row) * row_bytes,
                      r.c.data() + ((r.row0[i] + row) * r.d.N + r.col0[j]) * size, row_bytes);
      }
}

// The rectangle's composites, for an error: the PE of the first, how many others, the dtypes.
std::string describe(const Rectangle& r) {
  std::size_t count = 0;
  for (const auto& ps : r.products) count += ps.size();
  const HeldProduct& first = *r.products.front().front();
  std::string s = "composite gemm on " + first.pe;
  if (count > 1) s += " (computed with " + std::to_string(count - 1) + " other composite(s))";
  return s + " (" + std::string(dtype_name(r.d.in_dtype)) + " inputs, " +
         std::string(dtype_name(r.d.out_dtype)) + " result)";
}

}  // namespace

HeldGemms::HeldGemms(FunctionalMemory& memory, backends::GemmBackend& backend, GemmWorkerPool& pool,
                     std::uint64_t max_bytes)
    : memory_(memory), backend_(backend), pool_(pool), max_bytes_(max_bytes) {
  memory_.attach(*this);
}

HeldGemms::~HeldGemms() {
  for (const auto& p : held_) mark(*p, false);
  memory_.detach(*this);
}

void HeldGemms::mark(const HeldProduct& p, bool on) {
  const auto apply = [&](std::uint64_t addr, std::uint64_t bytes, bool write) {
    if (bytes == 0) return;
    if (on)
      memory_.hold(*this, addr, bytes, write);
    else
      memory_.unhold(*this, addr, bytes, write);
  };
  apply(p.a.addr, p.a.span_bytes(), false);
  apply(p.b.addr, p.b.span_bytes(), false);
  apply(p.out, p.out_bytes(), true);
}

std::shared_ptr<HeldProduct> HeldGemms::hold(HeldProduct product) {
  auto p = std::make_shared<HeldProduct>(std::move(product));
  std::uint64_t more = p->out_bytes();
  for (const MatrixAt* m : {&p->a, &p->b})
    if (!operands_.contains(*m)) more += m->span_bytes();
  if (!held_.empty() && held_bytes_ + more > max_bytes_) settle();
  mark(*p, true);  // settles what the product's reads and write conflict with
  for (const MatrixAt* m : {&p->a, &p->b})
    if (operands_.insert(*m).second) held_bytes_ += m->span_bytes();
  held_bytes_ += p->out_bytes();
  held_.push_back(p);
  return p;
}

void HeldGemms::complete(HeldProduct& p) {
  p.completion = ++completions_;
  if (p.state == HeldProduct::State::held) {
    p.completed = true;  // written when settled
  } else if (p.state == HeldProduct::State::computed) {
    memory_.write(p.out, p.result.data(), p.result.size());
    p.result = {};
    p.state = HeldProduct::State::written;
  }
}

void HeldGemms::settle() {
  if (held_.empty()) return;
  std::vector<std::shared_ptr<HeldProduct>> batch;
  batch.swap(held_);
  operands_.clear();
  held_bytes_ = 0;
  for (const auto& p : batch) {
    mark(*p, false);
    p->state = HeldProduct::State::computing;
  }
  compute(batch);  // on an error the batch is lost; the run stops with it
  std::vector<HeldProduct*> finished;
  for (const auto& p : batch) {
    p->state = HeldProduct::State::computed;
    if (p->completed) finished.push_back(p.get());
  }
  std::sort(finished.begin(), finished.end(), [](const HeldProduct* x, const HeldProduct* y) {
    return x->completion < y->completion;
  });
  for (HeldProduct* p : finished) {
    memory_.write(p->out, p->result.data(), p->result.size());
    p->result = {};
    p->state = HeldProduct::State::written;
  }
}

void HeldGemms::drop_incomplete() {
  std::vector<std::shared_ptr<HeldProduct>> keep;
  operands_.clear();
  held_bytes_ = 0;
  for (auto& p : held_) {
    if (!p->completed) {
      mark(*p, false);
      p->state = HeldProduct::State::dropped;
      continue;
    }
    for (const MatrixAt* m : {&p->a, &p->b})
      if (operands_.insert(*m).second) held_bytes_ += m->span_bytes();
    held_bytes_ += p->out_bytes();
    keep.push_back(std::move(p));
  }
  held_ = std::move(keep);
}

void HeldGemms::compute(const std::vector<std::shared_ptr<HeldProduct>>& batch) {
  std::vector<Rectangle> rects;
  // Products that can share a GEMM: no transposes, same dtypes and K.
  std::map<std::tuple<DType, DType, std::int64_t>, std::vector<HeldProduct*>> groups;
  for (const auto& p : batch) {
    if (p->trans_a || p->trans_b)
      rects.push_back(single(p.get()));
    else
      groups[{p->a.dtype, p->out_dtype, p->k}].push_back(p.get());
  }
  for (const auto& [key, products] : groups) {
    std::map<MatrixAt, std::size_t> a_id, b_id;
    std::vector<const MatrixAt*> a_list, b_list;
    std::map<std::pair<std::size_t, std::size_t>, std::vector<HeldProduct*>> pairs;
    for (HeldProduct* p : products) {
      const auto a = a_id.try_emplace(p->a, a_list.size());
      if (a.second) a_list.push_back(&p->a);
      const auto b = b_id.try_emplace(p->b, b_list.size());
      if (b.second) b_list.push_back(&p->b);
      pairs[{a.first->second, b.first->second}].push_back(p);
    }
    // The B blocks that meet the same A blocks form a rectangle with them.
    std::vector<std::vector<std::size_t>> a_sets(b_list.size());
    for (const auto& [ab, unused] : pairs) a_sets[ab.second].push_back(ab.first);  // sorted
    std::map<std::vector<std::size_t>, std::vector<std::size_t>> b_sets;
    for (std::size_t j = 0; j < b_list.size(); ++j) b_sets[a_sets[j]].push_back(j);
    for (const auto& [as, bs] : b_sets) {
      Rectangle& r = rects.emplace_back();
      for (const std::size_t i : as) r.as.push_back(a_list[i]);
      for (const std::size_t j : bs) r.bs.push_back(b_list[j]);
      for (const std::size_t i : as)
        for (const std::size_t j : bs) r.products.push_back(std::move(pairs[{i, j}]));
    }
  }

  // Operands gathered here, the GEMMs on the pool, all in flight together.
  std::vector<std::future<void>> running;
  std::exception_ptr error;
  try {
    for (Rectangle& r : rects) {
      gather(memory_, r);
      running.push_back(pool_.submit([backend = &backend_, d = r.d, &r] {
        try {
          backend->gemm(d);
        } catch (const std::exception& e) {
          throw std::runtime_error(describe(r) + ": " + e.what());
        }
      }));
      ++gemm_calls_;
    }
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& f : running) {  // every call must end before its buffers go
    try {
      f.get();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  for (Rectangle& r : rects) scatter(r);
  products_computed_ += batch.size();
}

}  // namespace cubesim::detail
