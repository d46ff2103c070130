#include "profile/profile_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace graph_ascend::profile {
namespace {

std::string Num(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

std::string Short(double x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace

const char* SeriesColour(int series) {
  switch (series) {
    case kForward: return "#1f77b4";
    case kBackward: return "#d62728";
    default: return "#2ca02c";
  }
}

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters have no place in XML 1.0: shown as '?'.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string ProfileSvg(const Profile& p, int width, int height) {
  const double left = 64, right = 16, top = 28, bottom = 78;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  // The log scale spans every positive error and floor; a zero sits on the bottom line.
  double lo = INFINITY, hi = 0;
  for (const Point& point : p.points) {
    for (const Value& v : point.value) {
      if (!v.has) continue;
      for (double x : {v.error, v.floor}) {
        if (x > 0 && std::isfinite(x)) {
          lo = std::min(lo, x);
          hi = std::max(hi, x);
        }
      }
    }
  }
  if (!(hi > 0)) {
    lo = 1e-6;
    hi = 1;
  }
  double lo_decade = std::floor(std::log10(lo)) - 1, hi_decade = std::ceil(std::log10(hi));
  if (hi_decade <= lo_decade) hi_decade = lo_decade + 1;
  auto y_of = [&](double x) {
    if (!(x > 0)) return top + plot_h;
    if (!std::isfinite(x)) return top;
    // Half a decade under the lowest line is kept for the zeros.
    double t = (std::log10(x) - lo_decade + 0.5) / (hi_decade - lo_decade + 0.5);
    return top + plot_h * (1 - std::clamp(t, 0.0, 1.0));
  };
  size_t n = p.points.size();
  double step = n > 0 ? plot_w / static_cast<double>(n) : plot_w;
  auto x_of = [&](size_t i) { return left + step * (static_cast<double>(i) + 0.5); };

  std::string s = "<svg class=\"ga-profile-chart\" width=\"" +
                  std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                  std::to_string(width) + " " + std::to_string(height) +
                  "\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n";
  s += "<title>layer profile by " + EscapeXml(p.grouping) + "</title>\n";
  // Decades.
  for (double d = lo_decade; d <= hi_decade; ++d) {
    double y = y_of(std::pow(10.0, d));
    s += "<line x1=\"" + Num(left) + "\" x2=\"" + Num(left + plot_w) + "\" y1=\"" + Num(y) + "\" y2=\"" + Num(y) +
         "\" stroke=\"#ddd\"/>";
    s += "<text x=\"" + Num(left - 6) + "\" y=\"" + Num(y + 4) + "\" text-anchor=\"end\" fill=\"#555\">1e" +
         std::to_string(static_cast<int>(d)) + "</text>\n";
  }
  s += "<text x=\"" + Num(left - 6) + "\" y=\"" + Num(top + plot_h + 4) +
       "\" text-anchor=\"end\" fill=\"#555\">0</text>\n";
  // Columns: the ranking's entries shaded, each column a click target.
  size_t every = std::max<size_t>(1, (n + 23) / 24);
  for (size_t i = 0; i < n; ++i) {
    const Point& point = p.points[i];
    double x0 = left + step * static_cast<double>(i);
    std::string fill = point.first ? "#fbe3e3" : point.ranked > 0 ? "#fdf2e0" : "transparent";
    std::string title = point.label;
    for (int k = 0; k < kSeriesCount; ++k) {
      const Value& v = point.value[k];
      title += std::string("\n") + SeriesName(k) + ": " +
               (v.has ? Short(v.error) + " (floor " + Short(v.floor) + ")" + (v.error > v.floor ? " above" : "")
                      : std::string("-"));
    }
    if (point.ranked > 0) title += "\ndivergence ranking: " + std::to_string(point.ranked);
    if (point.first) title += ", the first divergence";
    s += "<rect class=\"ga-profile-hit\" data-point=\"" + std::to_string(i) + "\" data-node=\"" +
         std::to_string(point.node) + "\" x=\"" + Num(x0) + "\" y=\"" + Num(top) + "\" width=\"" + Num(step) +
         "\" height=\"" + Num(plot_h) + "\" fill=\"" + fill + "\"><title>" + EscapeXml(title) + "</title></rect>\n";
    if (i % every == 0 || point.first) {
      double x = x_of(i), y = top + plot_h + 12;
      s += "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"end\" transform=\"rotate(-35 " + Num(x) +
           " " + Num(y) + ")\" fill=\"" + (point.first ? "#b00" : "#333") + "\">" + EscapeXml(point.label) +
           "</text>\n";
    }
  }
  // Each series: its floor dashed, its errors as a line with dots.
  for (int k = 0; k < kSeriesCount; ++k) {
    std::string floor_line, error_line, dots;
    for (size_t i = 0; i < n; ++i) {
      const Value& v = p.points[i].value[k];
      if (!v.has) continue;
      floor_line += Num(x_of(i)) + "," + Num(y_of(v.floor)) + " ";
      error_line += Num(x_of(i)) + "," + Num(y_of(v.error)) + " ";
      dots += "<circle cx=\"" + Num(x_of(i)) + "\" cy=\"" + Num(y_of(v.error)) + "\" r=\"3.5\" fill=\"" +
              (v.error > v.floor ? SeriesColour(k) : "#fff") + "\" stroke=\"" + SeriesColour(k) +
              "\" pointer-events=\"none\"/>";
    }
    if (error_line.empty()) continue;
    s += "<polyline class=\"ga-profile-floor\" points=\"" + floor_line + "\" fill=\"none\" stroke=\"" +
         SeriesColour(k) + "\" stroke-opacity=\"0.5\" stroke-dasharray=\"4 3\" pointer-events=\"none\"/>\n";
    s += "<polyline class=\"ga-profile-series\" data-series=\"" + std::string(SeriesName(k)) + "\" points=\"" +
         error_line + "\" fill=\"none\" stroke=\"" + SeriesColour(k) + "\" stroke-width=\"1.5\" pointer-events=\"none\"/>\n";
    s += dots + "\n";
  }
  // Axes and legend.
  s += "<line x1=\"" + Num(left) + "\" x2=\"" + Num(left) + "\" y1=\"" + Num(top) + "\" y2=\"" + Num(top + plot_h) +
       "\" stroke=\"#888\"/><line x1=\"" + Num(left) + "\" x2=\"" + Num(left + plot_w) + "\" y1=\"" +
       Num(top + plot_h) + "\" y2=\"" + Num(top + plot_h) + "\" stroke=\"#888\"/>\n";
  double lx = left;
  for (int k = 0; k < kSeriesCount; ++k) {
    s += "<circle cx=\"" + Num(lx + 5) + "\" cy=\"12\" r=\"4\" fill=\"" + std::string(SeriesColour(k)) + "\"/><text x=\"" +
         Num(lx + 13) + "\" y=\"16\" fill=\"#333\">" + SeriesName(k) + "</text>";
    lx += 150;
  }
  s += "<line x1=\"" + Num(lx) + "\" x2=\"" + Num(lx + 18) + "\" y1=\"12\" y2=\"12\" stroke=\"#666\" "
       "stroke-dasharray=\"4 3\"/><text x=\"" + Num(lx + 23) + "\" y=\"16\" fill=\"#333\">noise floor</text>\n";
  s += "</svg>\n";
  return s;
}

}  // namespace graph_ascend::profile
