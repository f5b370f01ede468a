// Kvault's patch of node-llama-cpp's addon: a sequence's state saved into memory JavaScript owns,
// and loaded from the runs of bytes JavaScript gives (views of the engine's pages), in the very
// format llama_state_seq_save_file writes and llama_state_seq_load_file reads (magic, version,
// token count, tokens, then the state), so the engine's codec reads both paths alike. The file
// path passes over the bytes four times more (tmpfs write, read, write, read) and faults in fresh
// pages on each; this one copies the KV once each way: out of the cache into a buffer or straight
// into the pages, and from the pages into the cache, hashing each page on the way where the engine
// asks (its seal as the save writes it, its verification as the load reads it). The jobs run on the
// context's own thread (AddonContextThread.h), in order with its decodes.

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "llama.h"
#include "ggml-backend.h"
#include "llama-io.h"
#include "llama-memory.h"
#include "addonGlobals.h"
#include "AddonContext.h"

// llama.cpp's own copy of xxHash, whose XXH64 is the one the engine seals pages with (pageChecksum.ts)
#define XXH_INLINE_ALL
#include "../llama.cpp/vendor/hash/xxhash/xxhash.h"

// llama_state_seq_get_data and llama_state_seq_set_data put 8 bytes of their own before the state
// a file holds: this magic (llama-context.cpp's io_magic, not in llama.h) and the sequence id.
static constexpr uint32_t kvaultSequenceBufferMagic = 0xaf143cd8u;
static constexpr size_t kvaultSequenceBufferHeaderBytes = sizeof(uint32_t) + sizeof(llama_seq_id);

static size_t kvaultFileHeaderBytes(size_t numTokens) {
    return 3 * sizeof(uint32_t) + numTokens * sizeof(llama_token);
}

static std::string kvaultHex(uint32_t value) {
    char text[11];
    std::snprintf(text, sizeof(text), "0x%08x", value);
    return text;
}

// saveSequenceStateToBuffer(sequenceId, tokens, target): resolves with the state's size in bytes,
// written into target when target holds that many (the rest of target untouched), else nothing
// written: the caller gives a buffer of that size and calls again.
class AddonContextSaveSequenceStateToBufferWorker : public Napi::AsyncWorker {
    public:
        AddonContext* context;
        llama_seq_id sequenceId;
        std::vector<llama_token> tokens;
        Napi::ObjectReference targetReference;
        uint8_t* target;
        size_t targetSize;
        size_t stateSize = 0;

        AddonContextSaveSequenceStateToBufferWorker(const Napi::CallbackInfo& info, AddonContext* context)
            : Napi::AsyncWorker(info.Env(), "AddonContextSaveSequenceStateToBufferWorker"),
              context(context),
              deferred(Napi::Promise::Deferred::New(info.Env())) {
            context->Ref();

            sequenceId = info[0].As<Napi::Number>().Int32Value();
            Napi::Uint32Array inputTokens = info[1].As<Napi::Uint32Array>();
            tokens.assign(inputTokens.Data(), inputTokens.Data() + inputTokens.ElementLength());
            Napi::Uint8Array targetArray = info[2].As<Napi::Uint8Array>();
            targetReference = Napi::Persistent(targetArray.As<Napi::Object>()); // kept alive until the job is done
            target = targetArray.Data();
            targetSize = targetArray.ByteLength();
        }
        ~AddonContextSaveSequenceStateToBufferWorker() {
            context->Unref();
        }

        Napi::Promise GetPromise() {
            return deferred.Promise();
        }

    protected:
        Napi::Promise::Deferred deferred;

        void Execute() {
            try {
                const size_t fileHeaderBytes = kvaultFileHeaderBytes(tokens.size());
                const size_t bufferStateBytes = llama_state_seq_get_size(context->ctx, sequenceId);
                if (bufferStateBytes < kvaultSequenceBufferHeaderBytes) {
                    SetError("llama_state_seq_get_size reported " + std::to_string(bufferStateBytes) + " bytes for sequence " +
                             std::to_string(sequenceId) + ", less than its own " + std::to_string(kvaultSequenceBufferHeaderBytes) +
                             "-byte header");
                    return;
                }
                stateSize = fileHeaderBytes + bufferStateBytes - kvaultSequenceBufferHeaderBytes;
                if (stateSize > targetSize) {
                    return; // the caller comes back with room for stateSize bytes
                }

                // llama.cpp's own 8-byte header lands on the last 8 bytes of the file's header and
                // is overwritten by it below: the bytes come out as the file's, copied once.
                uint8_t* bufferState = target + fileHeaderBytes - kvaultSequenceBufferHeaderBytes;
                const size_t written = llama_state_seq_get_data(context->ctx, bufferState, bufferStateBytes, sequenceId);
                if (written != bufferStateBytes) {
                    SetError("llama_state_seq_get_data wrote " + std::to_string(written) + " of sequence " + std::to_string(sequenceId) +
                             "'s " + std::to_string(bufferStateBytes) + " state bytes");
                    return;
                }
                uint32_t magic;
                std::memcpy(&magic, bufferState, sizeof(magic));
                if (magic != kvaultSequenceBufferMagic) {
                    SetError("llama_state_seq_get_data began with " + kvaultHex(magic) + ", not the " + kvaultHex(kvaultSequenceBufferMagic) +
                             " Kvault's patch expects: this llama.cpp changed its state format; rebuild with a patch that knows it");
                    return;
                }

                const uint32_t header[3] = {LLAMA_STATE_SEQ_MAGIC, LLAMA_STATE_SEQ_VERSION, static_cast<uint32_t>(tokens.size())};
                std::memcpy(target, header, sizeof(header));
                std::memcpy(target + sizeof(header), tokens.data(), tokens.size() * sizeof(llama_token));
            } catch (const std::exception& e) {
                SetError(e.what());
            } catch (...) {
                SetError("Unknown error when calling \"llama_state_seq_get_data\"");
            }
        }
        void OnOK() {
            deferred.Resolve(Napi::Number::New(Env(), static_cast<double>(stateSize)));
        }
        void OnError(const Napi::Error& err) {
            deferred.Reject(err.Value());
        }
};
Napi::Value AddonContext::SaveSequenceStateToBuffer(const Napi::CallbackInfo& info) {
    if (disposed) {
        Napi::Error::New(info.Env(), "Context is disposed").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsTypedArray() || !info[2].IsTypedArray() ||
        info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
        Napi::TypeError::New(info.Env(), "saveSequenceStateToBuffer(sequenceId: number, tokens: Uint32Array, target: Uint8Array)")
            .ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }

    AddonContextSaveSequenceStateToBufferWorker* worker = new AddonContextSaveSequenceStateToBufferWorker(info, this);
    thread->queue(worker);
    return worker->GetPromise();
}

// A page hashed as a save writes it or a load reads it: its valid bytes, and the seed its checksum
// takes (the page's first token position, as pageChecksum.ts seeds it).
struct KvaultPageToHash {
    uint8_t* bytes;
    size_t size;
    uint64_t seed;
};

// A piece of the KV copied between the cache and a page that is hashed: `size` bytes of `tensor`
// from `tensorOffset`, at `pageBytes` in page `page`.
struct KvaultKvPiece {
    ggml_tensor* tensor;
    size_t tensorOffset;
    uint8_t* pageBytes;
    size_t size;
    uint32_t page;
};

// Copies and hashes host memory in pieces this long, so that what was copied is hashed while still
// in the cache; a GPU's KV is copied a piece at a time (each copy a transfer of its own).
static constexpr size_t kvaultHashStepBytes = 64 * 1024;
// A thread more for the pieces only when each thread gets at least this much.
static constexpr size_t kvaultBytesPerCopyThread = 4 * 1024 * 1024;
static constexpr unsigned kvaultMaxCopyThreads = 4;

// Copies the pieces out of the cache into the pages (a save) or from the pages into the cache (a
// load), and computes each page's XXH64 over its valid bytes as they are copied: a page's pieces
// come in the order of its bytes (every layer's K, then every layer's V, statePages.ts), so one
// pass reads each byte while it is still in the cache, and the bytes between pieces (a last page's
// rows past its positions, zero from the scrub) are hashed from the page as they are. A page whose
// pieces came in another order is hashed whole afterwards. The pages are shared among threads,
// each thread copying its own pages' pieces, where every tensor is in host memory; a GPU's tensors
// are copied on this thread, in order.
static void kvaultCopyAndHash(
    const std::vector<KvaultKvPiece>& pieces, bool intoPages, const std::vector<KvaultPageToHash>& pages, uint64_t* checksums) {
    size_t numBytes = 0;
    bool allHost = true;
    for (const auto& piece : pieces) {
        numBytes += piece.size;
        allHost = allHost && piece.tensor->buffer != nullptr && ggml_backend_buffer_is_host(piece.tensor->buffer);
    }
    unsigned numThreads = 1;
    const size_t stepBytes = allHost ? kvaultHashStepBytes : SIZE_MAX;
    if (allHost) {
        const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
        numThreads = static_cast<unsigned>(std::min<size_t>({kvaultMaxCopyThreads, hardware, std::max<size_t>(1, numBytes / kvaultBytesPerCopyThread)}));
    }
    // consecutive pages to each thread, about the same number of bytes apiece
    std::vector<unsigned> owner(pages.size(), 0);
    size_t totalPageBytes = 0;
    for (const auto& page : pages) {
        totalPageBytes += page.size;
    }
    size_t seen = 0;
    for (size_t i = 0; i < pages.size(); i++) {
        owner[i] = totalPageBytes == 0 ? 0 : static_cast<unsigned>(std::min<size_t>(numThreads - 1, seen * numThreads / totalPageBytes));
        seen += pages[i].size;
    }

    // copies and hashes the pieces of the pages `owner` gives `thread`
    auto copyAndHashOwn = [&](unsigned thread) {
        std::vector<XXH64_state_t> states(pages.size());
        std::vector<size_t> hashedUpTo(pages.size(), 0);
        std::vector<bool> inOrder(pages.size(), true);
        for (size_t i = 0; i < pages.size(); i++) {
            if (owner[i] == thread) {
                XXH64_reset(&states[i], pages[i].seed);
            }
        }
        for (const auto& piece : pieces) {
            if (owner[piece.page] != thread) {
                continue;
            }
            const KvaultPageToHash& page = pages[piece.page];
            const size_t at = static_cast<size_t>(piece.pageBytes - page.bytes);
            if (at < hashedUpTo[piece.page]) {
                inOrder[piece.page] = false;
            }
            for (size_t done = 0; done < piece.size;) {
                const size_t step = std::min(stepBytes, piece.size - done);
                if (intoPages) {
                    ggml_backend_tensor_get(piece.tensor, piece.pageBytes + done, piece.tensorOffset + done, step);
                } else {
                    ggml_backend_tensor_set(piece.tensor, piece.pageBytes + done, piece.tensorOffset + done, step);
                }
                done += step;
                if (inOrder[piece.page]) {
                    const size_t end = at + done;
                    XXH64_update(&states[piece.page], page.bytes + hashedUpTo[piece.page], end - hashedUpTo[piece.page]);
                    hashedUpTo[piece.page] = end;
                }
            }
        }
        for (size_t i = 0; i < pages.size(); i++) {
            if (owner[i] != thread) {
                continue;
            }
            if (inOrder[i]) {
                XXH64_update(&states[i], pages[i].bytes + hashedUpTo[i], pages[i].size - hashedUpTo[i]);
                checksums[i] = XXH64_digest(&states[i]);
            } else {
                checksums[i] = XXH64(pages[i].bytes, pages[i].size, pages[i].seed);
            }
        }
    };
    std::atomic<bool> failed{false};
    auto work = [&](unsigned thread) noexcept {
        try {
            copyAndHashOwn(thread);
        } catch (...) {
            failed = true;
        }
    };
    std::vector<std::thread> helpers;
    std::vector<unsigned> notStarted;
    for (unsigned thread = 1; thread < numThreads; thread++) {
        try {
            helpers.emplace_back(work, thread);
        } catch (...) {
            notStarted.push_back(thread); // no thread to be had: its pages are copied here
        }
    }
    work(0);
    for (unsigned thread : notStarted) {
        work(thread);
    }
    for (auto& helper : helpers) {
        helper.join();
    }
    if (failed) {
        throw std::runtime_error("copying and hashing the KV of " + std::to_string(pages.size()) + " pages failed");
    }
}

// Writes a state into two places at once: what llama.cpp writes with write() (the file's header,
// the tokens, the cells' metadata, each layer's type and row size) in order into `meta`, and what
// it writes with write_tensor() (the KV rows) in order into the runs, views of the engine's pages,
// so the KV goes from the cache into the pages with one copy. The caller planned both from the
// sequence's token count and the context's KV layout, and checks the metadata against that plan
// afterwards: the metadata fixes where every KV byte falls, so a plan that matches it placed every
// byte where the pages expect it. Where the pages are to be hashed (`runPages` names each run's
// page), the KV rows are only noted here, as pieces, and copied afterwards by kvaultCopyAndHash.
class KvaultSplitWriter : public llama_io_write_i {
    public:
        KvaultSplitWriter(uint8_t* meta, size_t metaSize, std::vector<std::pair<uint8_t*, size_t>> runs, const std::vector<uint32_t>* runPages)
            : meta(meta), metaSize(metaSize), runs(std::move(runs)), runPages(runPages) {
            for (const auto& run : this->runs) {
                numKvRemaining += run.second;
            }
        }

        void write(const void* src, size_t size) override {
            if (size > metaSize - numMetaWritten) {
                throw std::runtime_error("llama.cpp wrote " + std::to_string(numMetaWritten + size) + " bytes of metadata, " +
                                         std::to_string(metaSize) + " were planned");
            }
            std::memcpy(meta + numMetaWritten, src, size);
            numMetaWritten += size;
            numWritten += size;
        }

        void write_tensor(ggml_tensor* tensor, size_t offset, size_t size) override {
            if (size > numKvRemaining) {
                throw std::runtime_error("llama.cpp wrote " + std::to_string(numKvWritten + size) + " bytes of KV, " +
                                         std::to_string(numKvWritten + numKvRemaining) + " were planned");
            }
            size_t done = 0;
            while (done < size) {
                while (offsetInRun == runs[run].second) {
                    run++;
                    offsetInRun = 0;
                }
                const size_t numBytes = std::min(size - done, runs[run].second - offsetInRun);
                if (runPages != nullptr) {
                    pieces.push_back({tensor, offset + done, runs[run].first + offsetInRun, numBytes, (*runPages)[run]});
                } else {
                    ggml_backend_tensor_get(tensor, runs[run].first + offsetInRun, offset + done, numBytes);
                }
                offsetInRun += numBytes;
                done += numBytes;
            }
            numKvRemaining -= size;
            numKvWritten += size;
            numWritten += size;
        }

        size_t n_bytes() override {
            return numWritten;
        }

        size_t metaWritten() const {
            return numMetaWritten;
        }

        size_t kvRemaining() const {
            return numKvRemaining;
        }

        // The KV rows noted for kvaultCopyAndHash, in the order llama.cpp wrote them.
        const std::vector<KvaultKvPiece>& kvPieces() const {
            return pieces;
        }

    private:
        uint8_t* meta;
        size_t metaSize;
        std::vector<std::pair<uint8_t*, size_t>> runs;
        const std::vector<uint32_t>* runPages;
        std::vector<KvaultKvPiece> pieces;
        size_t run = 0;
        size_t offsetInRun = 0;
        size_t numMetaWritten = 0;
        size_t numKvWritten = 0;
        size_t numKvRemaining = 0;
        size_t numWritten = 0;
};

// saveSequenceStateToChunks(sequenceId, tokens, meta, runs[, runPages, pages, seeds, checksums]):
// writes the sequence's state in the file's format split in two, its metadata into meta and its KV
// into the runs (KvaultSplitWriter), and resolves with the state's size in bytes. Writes nothing
// when that size is not the planned one (meta's length and the runs' together): the caller then
// saves it whole instead. With the four arguments after runs, it also hashes each page as it writes
// it (kvaultCopyAndHash): runPages[i] is the index in pages of the page run i lies in, pages[j] that
// page's valid bytes, seeds[j] its checksum's seed, and checksums[j] receives its XXH64.
class AddonContextSaveSequenceStateToChunksWorker : public Napi::AsyncWorker {
    public:
        AddonContext* context;
        llama_seq_id sequenceId;
        std::vector<llama_token> tokens;
        std::vector<Napi::ObjectReference> references;
        uint8_t* meta;
        size_t metaSize;
        std::vector<std::pair<uint8_t*, size_t>> runs;
        size_t numPlannedBytes;
        size_t stateSize = 0;
        bool hashing = false;
        std::vector<uint32_t> runPages;
        std::vector<KvaultPageToHash> pages;
        uint64_t* checksums = nullptr;

        AddonContextSaveSequenceStateToChunksWorker(const Napi::CallbackInfo& info, AddonContext* context, Napi::Array runArray)
            : Napi::AsyncWorker(info.Env(), "AddonContextSaveSequenceStateToChunksWorker"),
              context(context),
              deferred(Napi::Promise::Deferred::New(info.Env())) {
            context->Ref();

            sequenceId = info[0].As<Napi::Number>().Int32Value();
            Napi::Uint32Array inputTokens = info[1].As<Napi::Uint32Array>();
            tokens.assign(inputTokens.Data(), inputTokens.Data() + inputTokens.ElementLength());
            Napi::Uint8Array metaArray = info[2].As<Napi::Uint8Array>();
            references.push_back(Napi::Persistent(metaArray.As<Napi::Object>())); // kept alive until the job is done
            meta = metaArray.Data();
            metaSize = metaArray.ByteLength();
            numPlannedBytes = metaSize;
            references.push_back(Napi::Persistent(runArray.As<Napi::Object>()));
            for (uint32_t i = 0; i < runArray.Length(); i++) {
                Napi::Uint8Array run = runArray.Get(i).As<Napi::Uint8Array>();
                references.push_back(Napi::Persistent(run.As<Napi::Object>()));
                runs.emplace_back(run.Data(), run.ByteLength());
                numPlannedBytes += run.ByteLength();
            }
            if (info.Length() >= 8) {
                hashing = true;
                Napi::Uint32Array runPageArray = info[4].As<Napi::Uint32Array>();
                runPages.assign(runPageArray.Data(), runPageArray.Data() + runPageArray.ElementLength());
                Napi::Array pageArray = info[5].As<Napi::Array>();
                references.push_back(Napi::Persistent(pageArray.As<Napi::Object>()));
                Napi::BigUint64Array seedArray = info[6].As<Napi::BigUint64Array>();
                for (uint32_t i = 0; i < pageArray.Length(); i++) {
                    Napi::Uint8Array page = pageArray.Get(i).As<Napi::Uint8Array>();
                    references.push_back(Napi::Persistent(page.As<Napi::Object>()));
                    pages.push_back({page.Data(), page.ByteLength(), seedArray[i]});
                }
                Napi::BigUint64Array checksumArray = info[7].As<Napi::BigUint64Array>();
                references.push_back(Napi::Persistent(checksumArray.As<Napi::Object>()));
                checksums = checksumArray.Data();
            }
        }
        ~AddonContextSaveSequenceStateToChunksWorker() {
            context->Unref();
        }

        Napi::Promise GetPromise() {
            return deferred.Promise();
        }

    protected:
        Napi::Promise::Deferred deferred;

        void Execute() {
            try {
                const size_t bufferStateBytes = llama_state_seq_get_size(context->ctx, sequenceId);
                if (bufferStateBytes < kvaultSequenceBufferHeaderBytes) {
                    SetError("llama_state_seq_get_size reported " + std::to_string(bufferStateBytes) + " bytes for sequence " +
                             std::to_string(sequenceId) + ", less than its own " + std::to_string(kvaultSequenceBufferHeaderBytes) +
                             "-byte header");
                    return;
                }
                stateSize = kvaultFileHeaderBytes(tokens.size()) + bufferStateBytes - kvaultSequenceBufferHeaderBytes;
                if (stateSize != numPlannedBytes) {
                    return; // the caller saves the state whole
                }
                llama_memory_t memory = llama_get_memory(context->ctx);
                if (memory == nullptr) {
                    SetError("the context has no memory to save a state from");
                    return;
                }

                // what llama_state_seq_save_file writes: the file's header and tokens, then what
                // llama_state_seq_get_data writes after its own 8-byte header (llama_context::
                // state_seq_write_data)
                KvaultSplitWriter writer(meta, metaSize, runs, hashing ? &runPages : nullptr);
                const uint32_t header[3] = {LLAMA_STATE_SEQ_MAGIC, LLAMA_STATE_SEQ_VERSION, static_cast<uint32_t>(tokens.size())};
                writer.write(header, sizeof(header));
                writer.write(tokens.data(), tokens.size() * sizeof(llama_token));
                llama_synchronize(context->ctx);
                memory->state_write(writer, sequenceId, 0);
                if (writer.metaWritten() != metaSize || writer.kvRemaining() != 0) {
                    SetError("llama.cpp wrote " + std::to_string(writer.metaWritten()) + " bytes of metadata and left " +
                             std::to_string(writer.kvRemaining()) + " bytes of KV unwritten; " + std::to_string(metaSize) +
                             " and 0 were planned");
                    return;
                }
                if (hashing) {
                    kvaultCopyAndHash(writer.kvPieces(), true, pages, checksums);
                }
            } catch (const std::exception& e) {
                SetError(e.what());
            } catch (...) {
                SetError("Unknown error when saving a sequence state");
            }
        }
        void OnOK() {
            deferred.Resolve(Napi::Number::New(Env(), static_cast<double>(stateSize)));
        }
        void OnError(const Napi::Error& err) {
            deferred.Reject(err.Value());
        }
};

// Whether `value` is a typed array of `type`.
static bool kvaultIsTypedArray(const Napi::Value& value, napi_typedarray_type type) {
    return value.IsTypedArray() && value.As<Napi::TypedArray>().TypedArrayType() == type;
}

// Whether `pageArray` holds Uint8Arrays, `chunkPages` names a page (or -1, none) for every chunk of
// `chunkArray`, and every chunk that names a page lies inside it: what the save's and the load's
// hashing arguments share (the chunks themselves checked as Uint8Arrays already).
template <typename PageIndexes>
static bool kvaultChunksInsidePages(Napi::Array chunkArray, const PageIndexes& chunkPages, Napi::Array pageArray) {
    if (chunkPages.ElementLength() != chunkArray.Length()) {
        return false;
    }
    std::vector<std::pair<const uint8_t*, size_t>> pages;
    for (uint32_t i = 0; i < pageArray.Length(); i++) {
        Napi::Value page = pageArray.Get(i);
        if (!kvaultIsTypedArray(page, napi_uint8_array)) {
            return false;
        }
        pages.emplace_back(page.As<Napi::Uint8Array>().Data(), page.As<Napi::Uint8Array>().ByteLength());
    }
    for (uint32_t i = 0; i < chunkArray.Length(); i++) {
        const int64_t page = chunkPages[i];
        if (page < 0) {
            continue;
        }
        Napi::Uint8Array chunk = chunkArray.Get(i).As<Napi::Uint8Array>();
        if (static_cast<size_t>(page) >= pages.size() || chunk.Data() < pages[page].first ||
            chunk.Data() + chunk.ByteLength() > pages[page].first + pages[page].second) {
            return false;
        }
    }
    return true;
}

// Whether info[first, first + count) are BigUint64Arrays of `length` elements each.
static bool kvaultChecksumArraysFit(const Napi::CallbackInfo& info, size_t first, size_t count, uint32_t length) {
    for (size_t i = first; i < first + count; i++) {
        if (!kvaultIsTypedArray(info[i], napi_biguint64_array) || info[i].As<Napi::BigUint64Array>().ElementLength() != length) {
            return false;
        }
    }
    return true;
}

// Whether the hashing arguments of saveSequenceStateToChunks fit its runs: a page index for every
// run, a seed and a checksum for every page, and every run inside the page it names.
static bool kvaultHashingArgumentsFit(const Napi::CallbackInfo& info) {
    if (!kvaultIsTypedArray(info[4], napi_uint32_array) || !info[5].IsArray()) {
        return false;
    }
    Napi::Array pageArray = info[5].As<Napi::Array>();
    return kvaultChecksumArraysFit(info, 6, 2, pageArray.Length()) &&
           kvaultChunksInsidePages(info[3].As<Napi::Array>(), info[4].As<Napi::Uint32Array>(), pageArray);
}

Napi::Value AddonContext::SaveSequenceStateToChunks(const Napi::CallbackInfo& info) {
    if (disposed) {
        Napi::Error::New(info.Env(), "Context is disposed").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    bool valid = info.Length() >= 4 && info[0].IsNumber() && info[1].IsTypedArray() && info[2].IsTypedArray() && info[3].IsArray() &&
                 info[1].As<Napi::TypedArray>().TypedArrayType() == napi_uint32_array &&
                 info[2].As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array;
    if (valid) {
        Napi::Array runArray = info[3].As<Napi::Array>();
        for (uint32_t i = 0; valid && i < runArray.Length(); i++) {
            Napi::Value run = runArray.Get(i);
            valid = run.IsTypedArray() && run.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array;
        }
    }
    if (valid && info.Length() >= 8) {
        valid = kvaultHashingArgumentsFit(info);
    }
    if (!valid) {
        Napi::TypeError::New(info.Env(),
                             "saveSequenceStateToChunks(sequenceId: number, tokens: Uint32Array, meta: Uint8Array, runs: Uint8Array[], "
                             "[runPages: Uint32Array, pages: Uint8Array[], seeds: BigUint64Array, checksums: BigUint64Array]), "
                             "each run inside the page it names")
            .ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }

    AddonContextSaveSequenceStateToChunksWorker* worker =
        new AddonContextSaveSequenceStateToChunksWorker(info, this, info[3].As<Napi::Array>());
    thread->queue(worker);
    return worker->GetPromise();
}

// Reads a state from runs of bytes in order, as llama_io_read_host reads one buffer: a read or a
// tensor's rows may span runs. Tensor rows go straight from the runs into the cache; where the
// pages are to be verified (`chunkPages` names each run's page, -1 for the metadata's runs), they
// are only noted here, as pieces, and copied afterwards by kvaultCopyAndHash.
class KvaultChunkReader : public llama_io_read_i {
    public:
        KvaultChunkReader(std::vector<std::pair<const uint8_t*, size_t>> chunks, const std::vector<int32_t>* chunkPages)
            : chunks(std::move(chunks)), chunkPages(chunkPages) {
            for (const auto& chunk : this->chunks) {
                numRemaining += chunk.second;
            }
        }

        void read(void* dst, size_t size) override {
            take(size, [this, dst](size_t chunkIndex, const uint8_t* bytes, size_t numBytes, size_t done) {
                if (chunkPages != nullptr && (*chunkPages)[chunkIndex] >= 0) {
                    // llama.cpp reads what it believes before a page is verified: only the metadata, never a page's bytes
                    throw std::runtime_error("llama.cpp read metadata from page bytes at byte " + std::to_string(numRead + done) +
                                             " of the state");
                }
                std::memcpy(static_cast<uint8_t*>(dst) + done, bytes, numBytes);
            });
        }

        void read_tensor(ggml_tensor* tensor, size_t offset, size_t size) override {
            take(size, [this, tensor, offset](size_t chunkIndex, const uint8_t* bytes, size_t numBytes, size_t done) {
                const int32_t page = chunkPages == nullptr ? -1 : (*chunkPages)[chunkIndex];
                if (page >= 0) {
                    pieces.push_back({tensor, offset + done, const_cast<uint8_t*>(bytes), numBytes, static_cast<uint32_t>(page)});
                } else {
                    ggml_backend_tensor_set(tensor, bytes, offset + done, numBytes);
                }
            });
        }

        size_t n_bytes() override {
            return numRead;
        }

        size_t remaining() const {
            return numRemaining;
        }

        // The KV rows noted for kvaultCopyAndHash, in the order llama.cpp read them.
        const std::vector<KvaultKvPiece>& kvPieces() const {
            return pieces;
        }

    private:
        template <typename Piece>
        void take(size_t size, Piece&& piece) {
            if (size > numRemaining) {
                throw std::runtime_error("the state ends " + std::to_string(numRemaining) + " bytes after byte " + std::to_string(numRead) +
                                         ", where llama.cpp reads " + std::to_string(size) + " more");
            }
            size_t done = 0;
            while (done < size) {
                while (offsetInChunk == chunks[chunk].second) {
                    chunk++;
                    offsetInChunk = 0;
                }
                const size_t numBytes = std::min(size - done, chunks[chunk].second - offsetInChunk);
                piece(chunk, chunks[chunk].first + offsetInChunk, numBytes, done);
                offsetInChunk += numBytes;
                done += numBytes;
            }
            numRemaining -= size;
            numRead += size;
        }

        std::vector<std::pair<const uint8_t*, size_t>> chunks;
        const std::vector<int32_t>* chunkPages;
        std::vector<KvaultKvPiece> pieces;
        size_t chunk = 0;
        size_t offsetInChunk = 0;
        size_t numRemaining = 0;
        size_t numRead = 0;
};

// loadSequenceStateFromChunks(sequenceId, chunks, maxContextSize[, chunkPages, pages, seeds,
// expected, recomputed]): loads a state in the file's format, given as runs of bytes in order, into
// the sequence and resolves with its tokens. The runs are read, never written, and must stay as
// they are until the promise settles. With the five arguments after maxContextSize, every page is
// verified as it is read: chunkPages[i] is the index in pages of the page chunk i lies in (-1 for
// the metadata's chunks), pages[j] that page's valid bytes, seeds[j] its checksum's seed,
// expected[j] the checksum it was sealed with, and recomputed[j] receives the XXH64 of its bytes as
// they were read. Where any page's differs from its expected one, the sequence is erased in this
// same job, before anything can decode over it, and the promise resolves with no tokens: the
// caller reads which page in `recomputed`.
class AddonContextLoadSequenceStateFromChunksWorker : public Napi::AsyncWorker {
    public:
        AddonContext* context;
        llama_seq_id sequenceId;
        Napi::ObjectReference chunksReference;
        std::vector<Napi::ObjectReference> chunkReferences;
        std::vector<std::pair<const uint8_t*, size_t>> chunks;
        size_t numBytes = 0;
        size_t maxContextSize;
        std::vector<llama_token> tokens;
        bool verifying = false;
        std::vector<int32_t> chunkPages;
        std::vector<KvaultPageToHash> pages;
        std::vector<uint64_t> expected;
        uint64_t* recomputed = nullptr;

        AddonContextLoadSequenceStateFromChunksWorker(const Napi::CallbackInfo& info, AddonContext* context, Napi::Array chunkArray)
            : Napi::AsyncWorker(info.Env(), "AddonContextLoadSequenceStateFromChunksWorker"),
              context(context),
              deferred(Napi::Promise::Deferred::New(info.Env())) {
            context->Ref();

            sequenceId = info[0].As<Napi::Number>().Int32Value();
            chunksReference = Napi::Persistent(chunkArray.As<Napi::Object>());
            for (uint32_t i = 0; i < chunkArray.Length(); i++) {
                Napi::Uint8Array chunk = chunkArray.Get(i).As<Napi::Uint8Array>();
                chunkReferences.push_back(Napi::Persistent(chunk.As<Napi::Object>())); // kept alive until the job is done
                chunks.emplace_back(chunk.Data(), chunk.ByteLength());
                numBytes += chunk.ByteLength();
            }
            maxContextSize = info[2].As<Napi::Number>().Uint32Value();
            if (info.Length() >= 8) {
                verifying = true;
                Napi::Int32Array chunkPageArray = info[3].As<Napi::Int32Array>();
                chunkPages.assign(chunkPageArray.Data(), chunkPageArray.Data() + chunkPageArray.ElementLength());
                Napi::Array pageArray = info[4].As<Napi::Array>();
                chunkReferences.push_back(Napi::Persistent(pageArray.As<Napi::Object>()));
                Napi::BigUint64Array seedArray = info[5].As<Napi::BigUint64Array>();
                Napi::BigUint64Array expectedArray = info[6].As<Napi::BigUint64Array>();
                for (uint32_t i = 0; i < pageArray.Length(); i++) {
                    Napi::Uint8Array page = pageArray.Get(i).As<Napi::Uint8Array>();
                    chunkReferences.push_back(Napi::Persistent(page.As<Napi::Object>()));
                    pages.push_back({page.Data(), page.ByteLength(), seedArray[i]});
                    expected.push_back(expectedArray[i]);
                }
                Napi::BigUint64Array recomputedArray = info[7].As<Napi::BigUint64Array>();
                chunkReferences.push_back(Napi::Persistent(recomputedArray.As<Napi::Object>()));
                recomputed = recomputedArray.Data();
            }
        }
        ~AddonContextLoadSequenceStateFromChunksWorker() {
            context->Unref();
        }

        Napi::Promise GetPromise() {
            return deferred.Promise();
        }

    protected:
        Napi::Promise::Deferred deferred;

        void Execute() {
            try {
                KvaultChunkReader reader(chunks, verifying ? &chunkPages : nullptr);
                if (reader.remaining() < kvaultFileHeaderBytes(0)) {
                    SetError("a " + std::to_string(numBytes) + "-byte state is shorter than its " + std::to_string(kvaultFileHeaderBytes(0)) +
                             "-byte header");
                    return;
                }
                uint32_t header[3];
                reader.read(header, sizeof(header));
                if (header[0] != LLAMA_STATE_SEQ_MAGIC || header[1] != LLAMA_STATE_SEQ_VERSION) {
                    SetError("the state's magic and version are " + kvaultHex(header[0]) + " and " + std::to_string(header[1]) + ", not " +
                             kvaultHex(LLAMA_STATE_SEQ_MAGIC) + " and " + std::to_string(LLAMA_STATE_SEQ_VERSION));
                    return;
                }
                const size_t numTokens = header[2];
                if (numTokens > maxContextSize) {
                    SetError("the state holds " + std::to_string(numTokens) + " tokens, more than the sequence's " +
                             std::to_string(maxContextSize));
                    return;
                }
                if (numTokens * sizeof(llama_token) > reader.remaining()) {
                    SetError("the state's " + std::to_string(numTokens) + " tokens need " + std::to_string(kvaultFileHeaderBytes(numTokens)) +
                             " bytes; it has " + std::to_string(numBytes));
                    return;
                }
                tokens.resize(numTokens);
                reader.read(tokens.data(), numTokens * sizeof(llama_token));

                // what llama_state_seq_set_data does after its own 8-byte header (llama_context::
                // state_seq_read_data), reading the runs in place of one buffer
                llama_memory_t memory = llama_get_memory(context->ctx);
                if (memory == nullptr) {
                    SetError("the context has no memory to load a state into");
                    return;
                }
                llama_synchronize(context->ctx);
                try {
                    memory->state_read(reader, sequenceId, 0); // on failure it clears the sequence and throws
                } catch (const std::exception& e) {
                    llama_memory_seq_rm(memory, sequenceId, -1, -1);
                    SetError(std::string("llama.cpp refused the state: ") + e.what());
                    return;
                }
                if (reader.remaining() != 0) {
                    // KV the engine cannot vouch for: a state is exactly as long as what it holds
                    llama_memory_seq_rm(memory, sequenceId, -1, -1);
                    SetError("llama.cpp read " + std::to_string(reader.n_bytes()) + " of the state's " + std::to_string(numBytes) +
                             " bytes; the rest is not a state's");
                    return;
                }
                if (verifying) {
                    // the KV rows into the cache, each page hashed as it is read, in this job: nothing
                    // decodes this sequence before the comparison below has erased it or let it be
                    try {
                        kvaultCopyAndHash(reader.kvPieces(), false, pages, recomputed);
                    } catch (...) {
                        llama_memory_seq_rm(memory, sequenceId, -1, -1); // cells whose KV was not all copied
                        throw;
                    }
                    for (size_t i = 0; i < pages.size(); i++) {
                        if (recomputed[i] != expected[i]) {
                            llama_memory_seq_rm(memory, sequenceId, -1, -1);
                            tokens.clear();
                            break;
                        }
                    }
                }
            } catch (const std::exception& e) {
                SetError(e.what());
            } catch (...) {
                SetError("Unknown error when loading a sequence state");
            }
        }
        void OnOK() {
            Napi::Uint32Array result = Napi::Uint32Array::New(Env(), tokens.size());
            std::memcpy(result.Data(), tokens.data(), tokens.size() * sizeof(llama_token));
            deferred.Resolve(result);
        }
        void OnError(const Napi::Error& err) {
            deferred.Reject(err.Value());
        }
};

// Whether the verifying arguments of loadSequenceStateFromChunks fit its chunks: a page index (or
// -1) for every chunk, a seed, an expected and a recomputed checksum for every page, and every
// page chunk inside the page it names.
static bool kvaultVerifyingArgumentsFit(const Napi::CallbackInfo& info) {
    if (!kvaultIsTypedArray(info[3], napi_int32_array) || !info[4].IsArray()) {
        return false;
    }
    Napi::Array pageArray = info[4].As<Napi::Array>();
    return kvaultChecksumArraysFit(info, 5, 3, pageArray.Length()) &&
           kvaultChunksInsidePages(info[1].As<Napi::Array>(), info[3].As<Napi::Int32Array>(), pageArray);
}

Napi::Value AddonContext::LoadSequenceStateFromChunks(const Napi::CallbackInfo& info) {
    if (disposed) {
        Napi::Error::New(info.Env(), "Context is disposed").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    bool valid = info.Length() >= 3 && info[0].IsNumber() && info[1].IsArray() && info[2].IsNumber();
    if (valid) {
        Napi::Array chunkArray = info[1].As<Napi::Array>();
        for (uint32_t i = 0; valid && i < chunkArray.Length(); i++) {
            Napi::Value chunk = chunkArray.Get(i);
            valid = chunk.IsTypedArray() && chunk.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array;
        }
    }
    if (valid && info.Length() >= 8) {
        valid = kvaultVerifyingArgumentsFit(info);
    }
    if (!valid) {
        Napi::TypeError::New(info.Env(),
                             "loadSequenceStateFromChunks(sequenceId: number, chunks: Uint8Array[], maxContextSize: number, "
                             "[chunkPages: Int32Array, pages: Uint8Array[], seeds: BigUint64Array, expected: BigUint64Array, "
                             "recomputed: BigUint64Array]), each page chunk inside the page it names")
            .ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }

    AddonContextLoadSequenceStateFromChunksWorker* worker =
        new AddonContextLoadSequenceStateFromChunksWorker(info, this, info[1].As<Napi::Array>());
    thread->queue(worker);
    return worker->GetPromise();
}
