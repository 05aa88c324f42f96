#include "tools/cli/name_list.h"

#include <algorithm>
#include <sstream>

namespace edgeattn {
namespace cli {
namespace {

std::string Braced(const std::vector<std::string>& names) {
  std::string text = "{";
  for (const std::string& name : names) text += (text.size() > 1 ? "," : "") + name;
  return text + "}";
}

std::vector<std::string> Split(const std::string& value) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(value);
  while (std::getline(in, item, ',')) items.push_back(item);
  if (value.empty() || value.back() == ',') items.emplace_back();  // getline drops the last ""
  return items;
}

}  // namespace

CLI::Validator NameList(const std::vector<std::string>& names) {
  const std::string braced = Braced(names);
  const auto check = [names, braced](std::string& value) -> std::string {
    for (const std::string& item : Split(value)) {
      if (item.empty()) {
        return "expected names separated by commas" +
               (names.empty() ? std::string() : ", each one of " + braced) +
               ", got an empty name in '" + value + "'";
      }
      if (!names.empty() && std::find(names.begin(), names.end(), item) == names.end()) {
        return item + " not in " + braced;
      }
    }
    return std::string();
  };
  return CLI::Validator(check, names.empty() ? std::string() : braced);
}

std::vector<std::string> SplitNameLists(const std::vector<std::string>& values) {
  std::vector<std::string> names;
  for (const std::string& value : values) {
    for (std::string& item : Split(value)) names.push_back(std::move(item));
  }
  return names;
}

}  // namespace cli
}  // namespace edgeattn
