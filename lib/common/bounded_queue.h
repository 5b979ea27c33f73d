// A FIFO of fixed capacity over storage allocated once, at construction.
// Pushing onto a full queue is a caller bug; push() returns false then.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace trainmover {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : items_(capacity) {}

  size_t size() const { return size_; }
  size_t capacity() const { return items_.size(); }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == items_.size(); }

  // The i-th element from the front.
  T& at(size_t i) { return items_[(head_ + i) % items_.size()]; }
  const T& at(size_t i) const { return items_[(head_ + i) % items_.size()]; }
  T& front() { return at(0); }
  T& back() { return at(size_ - 1); }

  bool push(T item) {
    if (full()) return false;
    items_[(head_ + size_) % items_.size()] = std::move(item);
    ++size_;
    return true;
  }
  void pop() {
    head_ = (head_ + 1) % items_.size();
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace trainmover
