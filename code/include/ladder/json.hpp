// A minimal JSON writer: enough for the results files, nothing more.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

/// A JSON value built in memory and printed with two-space indentation.
class Json {
 public:
  static Json object() { return Json(Kind::kObject); }
  static Json array() { return Json(Kind::kArray); }
  static Json string(const std::string& s) {
    Json j(Kind::kScalar);
    j.scalar_ = quote(s);
    return j;
  }
  /// A number; NaN and Inf have no JSON spelling and are written as null.
  /// Whole numbers below 2^53 are written exactly (2147483647, not
  /// 2.14748365e+09), others with nine significant digits.
  static Json number(double x) {
    Json j(Kind::kScalar);
    if (!std::isfinite(x)) {
      j.scalar_ = "null";
    } else {
      char buf[32];
      const bool whole = x == std::floor(x) && std::fabs(x) < 9007199254740992.0;
      std::snprintf(buf, sizeof buf, whole ? "%.0f" : "%.9g", x);
      j.scalar_ = buf;
    }
    return j;
  }
  static Json boolean(bool b) {
    Json j(Kind::kScalar);
    j.scalar_ = b ? "true" : "false";
    return j;
  }

  /// Adds a member to an object.
  Json& set(const std::string& key, Json value) {
    members_.emplace_back(key, std::move(value));
    return *this;
  }
  Json& set(const std::string& key, const std::string& s) { return set(key, string(s)); }
  Json& set(const std::string& key, const char* s) { return set(key, string(s)); }
  Json& set(const std::string& key, double x) { return set(key, number(x)); }
  Json& set(const std::string& key, int x) { return set(key, number(x)); }
  Json& set(const std::string& key, bool b) { return set(key, boolean(b)); }
  /// Appends an element to an array.
  Json& push(Json value) {
    members_.emplace_back(std::string(), std::move(value));
    return *this;
  }

  std::string dump(int indent = 0) const {
    if (kind_ == Kind::kScalar) return scalar_;
    const bool is_object = kind_ == Kind::kObject;
    if (members_.empty()) return is_object ? "{}" : "[]";
    const std::string pad(indent + 2, ' ');
    std::string out = is_object ? "{\n" : "[\n";
    for (size_t i = 0; i < members_.size(); ++i) {
      out += pad;
      if (is_object) out += quote(members_[i].first) + ": ";
      out += members_[i].second.dump(indent + 2);
      out += i + 1 < members_.size() ? ",\n" : "\n";
    }
    return out + std::string(indent, ' ') + (is_object ? "}" : "]");
  }

  static std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }

 private:
  enum class Kind { kObject, kArray, kScalar };
  explicit Json(Kind kind) : kind_(kind) {}
  Kind kind_;
  std::string scalar_;
  std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace ladder
