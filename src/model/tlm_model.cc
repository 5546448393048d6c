#include "model/tlm_model.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "language/sentence.h"
#include "support/error.h"

namespace tlm {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string dirname_of(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

}  // namespace

TlmModel load_tlm_model(const std::string& path) {
  TlmModel m;
  m.lm = LanguageModel::load(path, &m.info);
  TLM_USER_CHECK(m.info.extra.is_object() && m.info.extra.contains("tokenizer"))
      << "checkpoint " << path << " carries no tokenizer (not written by `tlm train`)";
  TLM_USER_CHECK(m.info.language_version == kLanguageVersion)
      << "checkpoint " << path << " was trained on tensor-language version "
      << m.info.language_version << ", this build speaks version " << kLanguageVersion
      << ": retrain it with " << kRetrainHint;
  m.tok = Tokenizer::from_json(m.info.extra["tokenizer"], "the tokenizer of checkpoint " + path);
  check_compatible(m.info, m.tok.hash(), kLanguageVersion, kRetrainHint);
  TLM_USER_CHECK(m.tok.size() == m.lm->config().vocab_size)
      << "checkpoint " << path << ": its tokenizer has " << m.tok.size() << " tokens but the model "
      << m.lm->config().vocab_size << " (corrupt file?)";
  return m;
}

std::string shipped_path(const char* file) {
  std::vector<std::string> candidates;
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    std::string dir = dirname_of(exe);
    candidates.push_back(dir + "/../models/" + file);  // build/tlm
    candidates.push_back(dir + "/models/" + file);
  }
#ifdef TLM_SOURCE_DIR
  candidates.push_back(std::string(TLM_SOURCE_DIR) + "/models/" + file);
#endif
  for (const std::string& c : candidates)
    if (exists(c)) return c;
  return "";
}

std::string default_model_path() { return shipped_path("tlm.ckpt"); }
std::string default_base_path() { return shipped_path("tlm-base.ckpt"); }

TlmModel load_model_or_default(const std::string& path) {
  if (!path.empty()) return load_tlm_model(path);
  std::string def = default_model_path();
  TLM_USER_CHECK(!def.empty()) << "no language model: pass --model CKPT, or train one ("
                               << kRetrainHint << ") and place it at models/tlm.ckpt";
  return load_tlm_model(def);
}

bool finetuned_task_hashes(const TlmModel& m, std::set<std::string>* out) {
  out->clear();
  const nlohmann::json& e = m.info.extra;
  if (!e.is_object() || !e.contains("finetune") || !e["finetune"].is_object()) return false;
  const nlohmann::json& ft = e["finetune"];
  if (!ft.contains("task_hashes") || !ft["task_hashes"].is_array()) return false;
  for (const nlohmann::json& h : ft["task_hashes"])
    if (h.is_string()) out->insert(h.get<std::string>());
  return true;
}

}  // namespace tlm
