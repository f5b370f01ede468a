#pragma once

// Kvault's patch of node-llama-cpp's addon: every job of one context (init, decode, sample,
// state save and load, checkpoints, unload) runs on one thread of that context's own, in the
// order JavaScript queued it, instead of on whichever libuv pool thread is free: hopping between
// pool threads slowed decode once a second context was beside it (docs/ARCHITECTURE.md, Threads;
// figures in docs/measurements.md).
// Completions go back to the JavaScript thread through a thread-safe function, which holds the
// event loop open only while jobs are pending. KVAULT_CONTEXT_THREAD=0 restores the pool.

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "napi.h"

class AddonContextThread {
    public:
        explicit AddonContextThread(Napi::Env env) : env(env) {
            const char* setting = std::getenv("KVAULT_CONTEXT_THREAD");
            enabled = setting == nullptr || std::strcmp(setting, "0") != 0;
            if (!enabled) {
                return;
            }
            lifetime = new CompletionsLifetime();
            completions = Completions::New(env, "AddonContextThread", 0, 1, this, onCompletionsFinalized, lifetime);
            completions.Unref(env);
            thread = std::thread([this]() { run(); });
        }

        ~AddonContextThread() {
            dispose();
        }

        // JavaScript thread only. Takes ownership of the worker, as Queue() does.
        void queue(Napi::AsyncWorker* worker) {
            if (!enabled) {
                worker->Queue();
                return;
            }
            if (pending++ == 0) {
                completions.Ref(env);
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                jobs.push_back(worker);
            }
            wake.notify_one();
        }

        // JavaScript thread only; idempotent. Runs the jobs still queued, then stops the thread.
        void dispose() {
            if (!enabled || disposed) {
                return;
            }
            disposed = true;
            {
                std::lock_guard<std::mutex> lock(mutex);
                stopping = true;
            }
            wake.notify_one();
            if (thread.joinable()) {
                thread.join();
            }
            if (lifetime->finalized) {
                delete lifetime; // Node already closed the function (its environment is being torn down)
            } else {
                lifetime->released = true; // the finalizer, which runs later, deletes it
                completions.Release();
            }
            lifetime = nullptr;
        }

    private:
        // Who frees what when: Node finalizes the thread-safe function either after Release (the
        // normal end) or by itself when the environment is torn down before the context is.
        struct CompletionsLifetime {
            bool finalized = false;
            bool released = false;
        };

        static void onCompletionsFinalized(Napi::Env, CompletionsLifetime* lifetime, AddonContextThread*) {
            if (lifetime->released) {
                delete lifetime;
            } else {
                lifetime->finalized = true;
            }
        }

        static void complete(Napi::Env env, Napi::Function, AddonContextThread* self, Napi::AsyncWorker* worker) {
            if (env == nullptr) {
                return; // the environment is going away: nothing can be resolved any more
            }
            if (--self->pending == 0 && !self->disposed) {
                self->completions.Unref(env);
            }
            worker->OnWorkComplete(env, napi_ok);
        }

        using Completions = Napi::TypedThreadSafeFunction<AddonContextThread, Napi::AsyncWorker, complete>;

        void run() {
            for (;;) {
                Napi::AsyncWorker* worker = nullptr;
                {
                    std::unique_lock<std::mutex> lock(mutex);
                    wake.wait(lock, [this]() { return stopping || !jobs.empty(); });
                    if (jobs.empty()) {
                        return;
                    }
                    worker = jobs.front();
                    jobs.pop_front();
                }
                worker->OnExecute(env);
                completions.NonBlockingCall(worker);
            }
        }

        Napi::Env env;
        bool enabled = true;
        bool disposed = false;
        size_t pending = 0; // JavaScript thread only
        Completions completions;
        CompletionsLifetime* lifetime = nullptr;
        std::thread thread;
        std::mutex mutex;
        std::condition_variable wake;
        std::deque<Napi::AsyncWorker*> jobs;
        bool stopping = false;
};
