// Kvault's patch of node-llama-cpp's addon: a context's own ggml thread pool, kept for its life, as
// llama-server and llama-bench attach one (common_threadpools::init). Without one, ggml-cpu makes a
// pool for every graph it computes and joins it after (ggml_graph_compute's disposable_threadpool):
// a thread created and ended per decoded token, and workers that start every graph cold. With a
// pool, workers poll for the next graph for a while (`poll`, 0-100, ggml's level: 0 sleeps at once,
// 50 is llama-server's default) before they sleep, so a stream's next token starts warm (figures in
// docs/measurements.md).

#include <string>

#include "llama.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "addonGlobals.h"
#include "AddonContext.h"

// The CPU backend's pool functions, looked up as common.cpp does: with GGML_BACKEND_DL they live in
// the variant loaded at run time, not in a library the addon links.
static bool kvaultThreadpoolFunctions(decltype(ggml_threadpool_new)** create, decltype(ggml_threadpool_free)** release) {
    ggml_backend_dev_t device = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (device == nullptr) {
        return false;
    }
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(device);
    *create = (decltype(ggml_threadpool_new)*) ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_new");
    *release = (decltype(ggml_threadpool_free)*) ggml_backend_reg_get_proc_address(reg, "ggml_threadpool_free");
    return *create != nullptr && *release != nullptr;
}

// After llama_free (disposeMemory): nothing computes on the pool any more. Idempotent.
void kvaultFreeThreadpool(AddonContext* context) {
    if (context->threadpool != nullptr && context->threadpoolFree != nullptr) {
        context->threadpoolFree(context->threadpool);
    }
    context->threadpool = nullptr;
}

// attachThreadpool(poll): resolves with the pool's thread count (the context's, llama_n_threads),
// replacing a pool attached before. On the context's own thread, in order with its decodes, so no
// graph is being computed while the pool changes.
class AddonContextAttachThreadpoolWorker : public Napi::AsyncWorker {
    public:
        AddonContext* context;
        uint32_t poll;
        int numThreads = 0;

        AddonContextAttachThreadpoolWorker(const Napi::Env& env, AddonContext* context, uint32_t poll)
            : Napi::AsyncWorker(env, "AddonContextAttachThreadpoolWorker"),
              context(context),
              poll(poll),
              deferred(Napi::Promise::Deferred::New(env)) {
            context->Ref();
        }
        ~AddonContextAttachThreadpoolWorker() {
            context->Unref();
        }

        Napi::Promise GetPromise() {
            return deferred.Promise();
        }

    protected:
        Napi::Promise::Deferred deferred;

        void Execute() {
            if (context->disposed || !context->contextLoaded || context->ctx == nullptr) {
                SetError("The context is disposed");
                return;
            }
            decltype(ggml_threadpool_new)* create = nullptr;
            decltype(ggml_threadpool_free)* release = nullptr;
            if (!kvaultThreadpoolFunctions(&create, &release)) {
                SetError("The CPU backend has no ggml_threadpool_new");
                return;
            }
            numThreads = llama_n_threads(context->ctx);
            ggml_threadpool_params params = ggml_threadpool_params_default(numThreads);
            params.poll = poll;
            ggml_threadpool* pool = create(&params);
            if (pool == nullptr) {
                SetError("ggml_threadpool_new failed for " + std::to_string(numThreads) + " threads");
                return;
            }
            llama_attach_threadpool(context->ctx, pool, nullptr);
            kvaultFreeThreadpool(context);
            context->threadpool = pool;
            context->threadpoolFree = release;
        }
        void OnOK() {
            deferred.Resolve(Napi::Number::New(Env(), numThreads));
        }
        void OnError(const Napi::Error& err) {
            deferred.Reject(err.Value());
        }
};

Napi::Value AddonContext::AttachThreadpool(const Napi::CallbackInfo& info) {
    if (disposed) {
        Napi::Error::New(info.Env(), "Context is disposed").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    if (info.Length() < 1 || !info[0].IsNumber()) {
        Napi::TypeError::New(info.Env(), "attachThreadpool(poll: number)").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    const double poll = info[0].As<Napi::Number>().DoubleValue();
    if (!(poll >= 0 && poll <= 100)) {
        Napi::RangeError::New(info.Env(), "attachThreadpool: poll is a level from 0 to 100, got " + std::to_string(poll))
            .ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }

    AddonContextAttachThreadpoolWorker* worker = new AddonContextAttachThreadpoolWorker(info.Env(), this, (uint32_t) poll);
    thread->queue(worker);
    return worker->GetPromise();
}
