#include "op_generate/json_value.h"

#include "json/json_writer.h"
#include "op_generate/api_names.h"

namespace graph_ascend::op_generate {

namespace {

void WriteTo(const JsonValue& v, json::JsonWriter* w) {
  switch (v.type) {
    case JsonValue::Type::kNull: w->Null(); break;
    case JsonValue::Type::kBool:
    case JsonValue::Type::kNumber: w->Raw(v.text); break;
    case JsonValue::Type::kString: w->String(v.text); break;
    case JsonValue::Type::kArray:
      w->BeginArray();
      for (const auto& item : v.items) WriteTo(item, w);
      w->EndArray();
      break;
    case JsonValue::Type::kObject:
      w->BeginObject();
      for (const auto& [key, value] : v.members) {
        w->Key(key);
        WriteTo(value, w);
      }
      w->EndObject();
      break;
  }
}

void Indent(std::string* out, int levels) { out->append(static_cast<size_t>(levels) * 4, ' '); }

}  // namespace

const JsonValue* JsonValue::Find(const std::string& key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

JsonValue* JsonValue::Find(const std::string& key) {
  for (auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string JsonValue::StringOr(const std::string& key, const std::string& fallback) const {
  const JsonValue* v = Find(key);
  return v != nullptr && v->is_string() ? v->text : fallback;
}

JsonValue JsonValue::String(std::string s) {
  JsonValue v;
  v.type = Type::kString;
  v.text = std::move(s);
  return v;
}

Result<JsonValue> JsonValue::Read(json::JsonReader* r) {
  auto type = r->Peek();
  if (!type.ok()) return type.error();
  JsonValue v;
  switch (*type) {
    case json::JsonType::kNull:
      GA_RETURN_IF_ERROR(r->ReadNull());
      return v;
    case json::JsonType::kBool: {
      auto b = r->ReadBool();
      if (!b.ok()) return b.error();
      v.type = Type::kBool;
      v.text = *b ? "true" : "false";
      return v;
    }
    case json::JsonType::kString: {
      auto s = r->ReadString();
      if (!s.ok()) return s.error();
      v.type = Type::kString;
      v.text = std::string(*s);
      return v;
    }
    case json::JsonType::kNumber: {
      // ReadCompact copies a number's text verbatim.
      v.type = Type::kNumber;
      GA_RETURN_IF_ERROR(r->ReadCompact(&v.text));
      return v;
    }
    case json::JsonType::kArray: {
      v.type = Type::kArray;
      GA_RETURN_IF_ERROR(r->EnterArray());
      for (;;) {
        auto more = r->NextElement();
        if (!more.ok()) return more.error();
        if (!*more) break;
        auto item = Read(r);
        if (!item.ok()) return item.error();
        v.items.push_back(std::move(*item));
      }
      return v;
    }
    case json::JsonType::kObject: {
      v.type = Type::kObject;
      GA_RETURN_IF_ERROR(r->EnterObject());
      std::string_view key;
      for (;;) {
        auto more = r->NextMember(&key);
        if (!more.ok()) return more.error();
        if (!*more) break;
        std::string name(key);
        auto value = Read(r);
        if (!value.ok()) return value.error();
        v.members.emplace_back(std::move(name), std::move(*value));
      }
      return v;
    }
  }
  return v;
}

void JsonValue::Write(std::string* out) const {
  json::JsonWriter w(out);
  WriteTo(*this, &w);
}

void JsonValue::WritePython(std::string* out, int indent) const {
  switch (type) {
    case Type::kNull: out->append("None"); return;
    case Type::kBool: out->append(text == "true" ? "True" : "False"); return;
    case Type::kNumber:
      if (text == "NaN") {
        out->append("math.nan");
      } else if (text == "Infinity") {
        out->append("math.inf");
      } else if (text == "-Infinity") {
        out->append("-math.inf");
      } else {
        // The reader checked the grammar; Python refuses the leading zeros JSON allows in none but "0".
        size_t digits = text[0] == '-' ? 1 : 0;
        size_t zeros = digits;
        while (zeros + 1 < text.size() && text[zeros] == '0' && text[zeros + 1] >= '0' && text[zeros + 1] <= '9') {
          ++zeros;
        }
        out->append(text, 0, digits);
        out->append(text, zeros, std::string::npos);
      }
      return;
    // Dump text: a Python literal with every non-printable escaped, never raw.
    case Type::kString: out->append(PythonString(text)); return;
    case Type::kArray:
    case Type::kObject: {
      bool array = type == Type::kArray;
      size_t n = array ? items.size() : members.size();
      bool flat = array;  // a list of scalars (a shape) stays on one line
      for (const auto& item : items) flat = flat && !item.is_array() && !item.is_object();
      if (flat) {
        out->push_back('[');
        for (size_t i = 0; i < n; ++i) {
          if (i > 0) out->append(", ");
          items[i].WritePython(out, indent);
        }
        out->push_back(']');
        return;
      }
      out->push_back(array ? '[' : '{');
      for (size_t i = 0; i < n; ++i) {
        out->push_back('\n');
        Indent(out, indent + 1);
        if (array) {
          items[i].WritePython(out, indent + 1);
        } else {
          out->append(PythonString(members[i].first));
          out->append(": ");
          members[i].second.WritePython(out, indent + 1);
        }
        out->push_back(',');
      }
      if (n > 0) {
        out->push_back('\n');
        Indent(out, indent);
      }
      out->push_back(array ? ']' : '}');
      return;
    }
  }
}

}  // namespace graph_ascend::op_generate
