/* MXNet's C API (mxnet/c_api.h of MXNet 1.9.1): the functions MXNet's cpp-package calls,
 * implemented by symbind's libmxnet.so over symbind's runtime. Same signatures and error
 * convention: 0 on success, -1 on failure with the message in MXGetLastError() (per thread).
 * What is not supported, and the error it gives: docs/coming-from-mxnet.md. */
#ifndef MXNET_C_API_H_
#define MXNET_C_API_H_

#include <stddef.h>

#include "c_api_base.h"

#ifdef __cplusplus
#define DEFAULT(x) = x
#else
#define DEFAULT(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t dim_t;
typedef const void* FunctionHandle;
typedef void* AtomicSymbolCreator;
typedef void* CachedOpHandle;
typedef void* SymbolHandle;
typedef void* AtomicSymbolHandle;
typedef void* ExecutorHandle;
typedef void* DataIterCreator;
typedef void* DataIterHandle;
typedef void* KVStoreHandle;
typedef void* RecordIOHandle;
typedef const void* ContextHandle;
typedef void (*ExecutorMonitorCallback)(const char*, NDArrayHandle, void*);
typedef void(MXKVStoreUpdater)(int key, NDArrayHandle recv, NDArrayHandle local, void* handle);
typedef void(MXKVStoreStrUpdater)(const char* key, NDArrayHandle recv, NDArrayHandle local,
                                  void* handle);
typedef void(MXKVStoreServerController)(int head, const char* body, void* controller_handle);

MXNET_DLL int MXDataIterBeforeFirst(DataIterHandle handle);
MXNET_DLL int MXDataIterCreateIter(DataIterCreator handle, uint32_t num_param, const char **keys,
    const char **vals, DataIterHandle *out);
MXNET_DLL int MXDataIterFree(DataIterHandle handle);
MXNET_DLL int MXDataIterGetData(DataIterHandle handle, NDArrayHandle *out);
MXNET_DLL int MXDataIterGetIndex(DataIterHandle handle, uint64_t **out_index, uint64_t *out_size);
MXNET_DLL int MXDataIterGetIterInfo(DataIterCreator creator, const char **name, const char
    **description, uint32_t *num_args, const char ***arg_names, const char ***arg_type_infos, const
    char ***arg_descriptions);
MXNET_DLL int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle *out);
MXNET_DLL int MXDataIterGetPadNum(DataIterHandle handle, int *pad);
MXNET_DLL int MXDataIterNext(DataIterHandle handle, int *out);
MXNET_DLL int MXExecutorBackward(ExecutorHandle handle, uint32_t len, NDArrayHandle *head_grads);
MXNET_DLL int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t
    num_map_keys, const char** map_keys, const int* map_dev_types, const int* map_dev_ids, uint32_t
    len, NDArrayHandle *in_args, NDArrayHandle *arg_grad_store, uint32_t *grad_req_type, uint32_t
    aux_states_len, NDArrayHandle *aux_states, ExecutorHandle shared_exec, ExecutorHandle *out);
MXNET_DLL int MXExecutorForward(ExecutorHandle handle, int is_train);
MXNET_DLL int MXExecutorFree(ExecutorHandle handle);
MXNET_DLL int MXExecutorOutputs(ExecutorHandle handle, uint32_t *out_size, NDArrayHandle **out);
MXNET_DLL int MXExecutorPrint(ExecutorHandle handle, const char **out_str);
MXNET_DLL int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback
    callback, void *callback_handle, bool monitor_all);
MXNET_DLL int MXGenBackendSubgraph(SymbolHandle sym_handle, const char *backend, SymbolHandle
    *ret_sym_handle);
MXNET_DLL int MXGetGPUCount(int* out);
MXNET_DLL int MXGetVersion(int *out);
MXNET_DLL int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle *inputs,
    int *num_outputs, NDArrayHandle **outputs, int num_params, const char **param_keys, const char
    **param_vals);
MXNET_DLL int MXKVStoreBarrier(KVStoreHandle handle);
MXNET_DLL int MXKVStoreCreate(const char *type, KVStoreHandle *out);
MXNET_DLL int MXKVStoreFree(KVStoreHandle handle);
MXNET_DLL int MXKVStoreGetGroupSize(KVStoreHandle handle, int *ret);
MXNET_DLL int MXKVStoreGetRank(KVStoreHandle handle, int *ret);
MXNET_DLL int MXKVStoreGetType(KVStoreHandle handle, const char** type);
MXNET_DLL int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle*
    vals);
MXNET_DLL int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle*
    vals);
MXNET_DLL int MXKVStoreIsSchedulerNode(int *ret);
MXNET_DLL int MXKVStoreIsServerNode(int *ret);
MXNET_DLL int MXKVStoreIsWorkerNode(int *ret);
MXNET_DLL int MXKVStorePull(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStorePullEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStoreRunServer(KVStoreHandle handle, MXKVStoreServerController controller, void
    *controller_handle);
MXNET_DLL int MXKVStoreSendCommmandToServers(KVStoreHandle handle, int cmd_id, const char*
    cmd_body);
MXNET_DLL int MXKVStoreSetUpdater(KVStoreHandle handle, MXKVStoreUpdater updater, void
    *updater_handle);
MXNET_DLL int MXListDataIters(uint32_t *out_size, DataIterCreator **out_array);
MXNET_DLL int MXNDArrayCreate(const uint32_t *shape, uint32_t ndim, int dev_type, int dev_id, int
    delay_alloc, NDArrayHandle *out);
MXNET_DLL int MXNDArrayCreateEx(const uint32_t *shape, uint32_t ndim, int dev_type, int dev_id, int
    delay_alloc, int dtype, NDArrayHandle *out);
MXNET_DLL int MXNDArrayCreateNone(NDArrayHandle *out);
MXNET_DLL int MXNDArrayFree(NDArrayHandle handle);
MXNET_DLL int MXNDArrayGetContext(NDArrayHandle handle, int *out_dev_type, int *out_dev_id);
MXNET_DLL int MXNDArrayGetDType(NDArrayHandle handle, int *out_dtype);
MXNET_DLL int MXNDArrayGetData(NDArrayHandle handle, void **out_pdata);
MXNET_DLL int MXNDArrayGetShapeEx(NDArrayHandle handle, int *out_dim, const int **out_pdata);
MXNET_DLL int MXNDArrayLoad(const char* fname, uint32_t *out_size, NDArrayHandle** out_arr, uint32_t
    *out_name_size, const char*** out_names);
MXNET_DLL int MXNDArrayLoadFromBuffer(const void *ndarray_buffer, size_t size, uint32_t *out_size,
    NDArrayHandle** out_arr, uint32_t *out_name_size, const char*** out_names);
MXNET_DLL int MXNDArrayReshape(NDArrayHandle handle, int ndim, int *dims, NDArrayHandle *out);
MXNET_DLL int MXNDArraySave(const char* fname, uint32_t num_args, NDArrayHandle* args, const char**
    keys);
MXNET_DLL int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end,
    NDArrayHandle *out);
MXNET_DLL int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void *data, size_t size);
MXNET_DLL int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void *data, size_t size);
MXNET_DLL int MXNDArrayWaitAll();
MXNET_DLL int MXNDArrayWaitToRead(NDArrayHandle handle);
MXNET_DLL int MXNDArrayWaitToWrite(NDArrayHandle handle);
MXNET_DLL int MXNotifyShutdown();
MXNET_DLL int MXRandomSeed(int seed);
MXNET_DLL int MXSymbolCompose(SymbolHandle sym, const char *name, uint32_t num_args, const char**
    keys, SymbolHandle* args);
MXNET_DLL int MXSymbolCopy(SymbolHandle symbol, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char
    **keys, const char **vals, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateFromFile(const char *fname, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateFromJSON(const char *json, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle *symbols, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateVariable(const char *name, SymbolHandle *out);
MXNET_DLL int MXSymbolFree(SymbolHandle symbol);
MXNET_DLL int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char **name, const char
    **description, uint32_t *num_args, const char ***arg_names, const char ***arg_type_infos, const
    char ***arg_descriptions, const char **key_var_num_args, const char **return_type DEFAULT(NULL));
MXNET_DLL int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle *out);
MXNET_DLL int MXSymbolGetName(SymbolHandle symbol, const char** out, int *success);
MXNET_DLL int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t *output_count);
MXNET_DLL int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle *out);
MXNET_DLL int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys, const
    uint32_t *arg_ind_ptr, const int *arg_shape_data, uint32_t *in_shape_size, const int
    **in_shape_ndim, const int ***in_shape_data, uint32_t *out_shape_size, const int
    **out_shape_ndim, const int ***out_shape_data, uint32_t *aux_shape_size, const int
    **aux_shape_ndim, const int ***aux_shape_data, int *complete);
MXNET_DLL int MXSymbolListArguments(SymbolHandle symbol, uint32_t *out_size, const char
    ***out_str_array);
MXNET_DLL int MXSymbolListAtomicSymbolCreators(uint32_t *out_size, AtomicSymbolCreator **out_array);
MXNET_DLL int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t *out_size, const char*** out);
MXNET_DLL int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t *out_size, const char
    ***out_str_array);
MXNET_DLL int MXSymbolListOutputs(SymbolHandle symbol, uint32_t *out_size, const char
    ***out_str_array);
MXNET_DLL int MXSymbolSaveToFile(SymbolHandle symbol, const char *fname);
MXNET_DLL int MXSymbolSaveToJSON(SymbolHandle symbol, const char **out_json);
MXNET_DLL int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value);

/* What MXNet's Python package calls beyond the cpp-package's set (docs/python.md). */
typedef void* ProfileHandle;
typedef void* CudaModuleHandle;
typedef void* CudaKernelHandle;
typedef void* DLManagedTensorHandle;
typedef void (*CachedOpMonitorCallback)(const char*, const char*, NDArrayHandle);
struct LibFeature {
  const char* name;
  bool enabled;
};
struct MXCallbackList {
  int num_callbacks;
  int (**callbacks)(void);
  void** contexts;
};
// autograd.Function's callbacks (MXCustomFunctionRecord): backward receives handles of the
// output gradients then the input gradients to write (the frontend frees them), one OpReq per
// input gradient, and returns nonzero on success; delete is called once when the recorded node
// is released.
enum CustomFunctionCallbacks { kCustomFunctionBackward, kCustomFunctionDelete };
typedef int (*CustomFunctionBwdFunc)(int num_ograds, int num_igrads, void** ptrs, const int* reqs,
                                     const int is_train, void* state);
typedef int (*CustomFunctionDelFunc)(void* state);
typedef int (*CustomOpPropCreator)(const char* op_type, const int num_kwargs, const char** keys,
    const char** values, struct MXCallbackList* ret);

MXNET_DLL int MXAggregateProfileStatsPrint(const char** out_str, int reset);
MXNET_DLL int MXAggregateProfileStatsPrintEx(const char** out_str, int, int, int, int);
MXNET_DLL int MXAutogradBackward(uint32_t num_output, NDArrayHandle* output_handles, NDArrayHandle*
    ograd_handles, int retain_graph);
MXNET_DLL int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle* output_handles,
    NDArrayHandle* ograd_handles, uint32_t num_variables, NDArrayHandle* var_handles, int
    retain_graph, int create_graph, int is_train, NDArrayHandle** grad_handles, int** grad_stypes);
MXNET_DLL int MXAutogradGetSymbol(NDArrayHandle handle, SymbolHandle*);
MXNET_DLL int MXAutogradIsRecording(bool* curr);
MXNET_DLL int MXAutogradIsTraining(bool* curr);
MXNET_DLL int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle* var_handles, uint32_t*
    reqs_array, NDArrayHandle* grad_handles);
MXNET_DLL int MXAutogradSetIsRecording(int is_recording, int* prev);
MXNET_DLL int MXAutogradSetIsTraining(int is_training, int* prev);
MXNET_DLL int MXCachedOpRegisterOpHook(NDArrayHandle handle, CachedOpMonitorCallback, bool);
MXNET_DLL int MXCreateCachedOp(SymbolHandle handle, CachedOpHandle* out);
MXNET_DLL int MXCreateCachedOpEx(SymbolHandle handle, int num_flags, const char** keys, const char**
    vals, CachedOpHandle* out);
MXNET_DLL int MXCustomFunctionRecord(int, NDArrayHandle*, int, NDArrayHandle*, struct
    MXCallbackList*);
MXNET_DLL int MXCustomOpRegister(const char* op_type, CustomOpPropCreator creator);
MXNET_DLL int MXDumpProcessProfile(int, int, KVStoreHandle);
MXNET_DLL int MXDumpProfile(int);
MXNET_DLL int MXEngineSetBulkSize(int bulk_size, int* prev_bulk_size);
MXNET_DLL int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle* head_grads,
    int);
MXNET_DLL int MXExecutorGetOptimizedSymbol(ExecutorHandle handle, SymbolHandle* out);
MXNET_DLL int MXExecutorReshapeEx(int partial_shaping, int allow_up_sizing, int dev_type, int
    dev_id, uint32_t num_map_keys, const char**, const int*, const int*, const uint32_t
    num_provided_arg_shapes, const char** provided_arg_shape_names, const int*
    provided_arg_shape_data, const uint32_t* provided_arg_shape_idx, uint32_t* num_in_args,
    NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states, NDArrayHandle**
    aux_states, ExecutorHandle shared_exec, ExecutorHandle* out);
MXNET_DLL int MXExecutorSimpleBindEx(SymbolHandle symbol_handle, int dev_type, int dev_id, const
    uint32_t num_g2c_keys, const char**, const int*, const int*, const uint32_t
    provided_grad_req_list_len, const char** provided_grad_req_names, const char**
    provided_grad_req_types, const uint32_t num_provided_arg_shapes, const char**
    provided_arg_shape_names, const int* provided_arg_shape_data, const uint32_t*
    provided_arg_shape_idx, const uint32_t num_provided_arg_dtypes, const char**
    provided_arg_dtype_names, const int* provided_arg_dtypes, const uint32_t
    num_provided_arg_stypes, const char** provided_arg_stype_names, const int* provided_arg_stypes,
    const uint32_t num_shared_arg_names, const char** shared_arg_name_list, int* shared_buffer_len,
    const char** shared_buffer_name_list, NDArrayHandle* shared_buffer_handle_list, const char***
    updated_shared_buffer_name_list, NDArrayHandle** updated_shared_buffer_handle_list, uint32_t*
    num_in_args, NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
    NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out);
MXNET_DLL int MXExecutorSimpleBindEx64(SymbolHandle symbol_handle, int dev_type, int dev_id, const
    uint32_t num_g2c_keys, const char**, const int*, const int*, const uint32_t
    provided_grad_req_list_len, const char** provided_grad_req_names, const char**
    provided_grad_req_types, const uint32_t num_provided_arg_shapes, const char**
    provided_arg_shape_names, const int64_t* provided_arg_shape_data, const uint32_t*
    provided_arg_shape_idx, const uint32_t num_provided_arg_dtypes, const char**
    provided_arg_dtype_names, const int* provided_arg_dtypes, const uint32_t
    num_provided_arg_stypes, const char** provided_arg_stype_names, const int* provided_arg_stypes,
    const uint32_t num_shared_arg_names, const char** shared_arg_name_list, int* shared_buffer_len,
    const char** shared_buffer_name_list, NDArrayHandle* shared_buffer_handle_list, const char***
    updated_shared_buffer_name_list, NDArrayHandle** updated_shared_buffer_handle_list, uint32_t*
    num_in_args, NDArrayHandle** in_args, NDArrayHandle** arg_grads, uint32_t* num_aux_states,
    NDArrayHandle** aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle* out);
MXNET_DLL int MXFreeCachedOp(CachedOpHandle handle);
MXNET_DLL int MXGenAtomicSymbolFromSymbol(SymbolHandle sym_handle, SymbolHandle*);
MXNET_DLL int MXGetEnv(const char* name, const char** value);
MXNET_DLL int MXGetGPUMemoryInformation64(int dev, uint64_t*, uint64_t*);
MXNET_DLL int MXImperativeInvokeEx(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle*
    inputs, int* num_outputs, NDArrayHandle** outputs, int num_params, const char** param_keys,
    const char** param_vals, const int** out_stypes);
MXNET_DLL int MXInvokeCachedOp(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int*
    num_outputs, NDArrayHandle** outputs);
MXNET_DLL int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle* inputs, int*
    num_outputs, NDArrayHandle** outputs, const int** out_stypes);
MXNET_DLL int MXIsNumpyShape(int* curr);
MXNET_DLL int MXLibInfoFeatures(const struct LibFeature** lib_features, size_t* size);
MXNET_DLL int MXListAllOpNames(uint32_t* out_size, const char*** out_array);
MXNET_DLL int MXListFunctions(uint32_t* out_size, FunctionHandle** out_array);
MXNET_DLL int MXLoadLib(const char* path, unsigned);
MXNET_DLL int MXLoadTVMOp(const char*);
MXNET_DLL int MXNDArrayAt(NDArrayHandle handle, uint32_t idx, NDArrayHandle* out);
MXNET_DLL int MXNDArrayAt64(NDArrayHandle handle, int64_t idx, NDArrayHandle* out);
MXNET_DLL int MXNDArrayCallDLPackDeleter(DLManagedTensorHandle);
MXNET_DLL int MXNDArrayCreateEx64(const int64_t* shape, int ndim, int dev_type, int dev_id, int, int
    dtype, NDArrayHandle* out);
MXNET_DLL int MXNDArrayCreateFromSharedMemEx(int, int, const int*, int, int, NDArrayHandle*);
MXNET_DLL int MXNDArrayCreateSparseEx(int storage_type, const uint32_t*, uint32_t, int, int, int,
    int, uint32_t, int*, uint32_t*, const uint32_t*, NDArrayHandle*);
MXNET_DLL int MXNDArrayCreateSparseEx64(int storage_type, const int64_t*, int, int, int, int, int,
    uint32_t, int*, int*, const int64_t*, NDArrayHandle*);
MXNET_DLL int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle* out);
MXNET_DLL int MXNDArrayFromDLPack(DLManagedTensorHandle dlpack, NDArrayHandle* out_handle);
MXNET_DLL int MXNDArrayFromDLPackEx(DLManagedTensorHandle dlpack, const bool transient_handle,
    NDArrayHandle* out_handle);
MXNET_DLL int MXNDArrayGetAuxNDArray(NDArrayHandle handle, uint32_t, NDArrayHandle*);
MXNET_DLL int MXNDArrayGetAuxNDArray64(NDArrayHandle handle, int64_t, NDArrayHandle*);
MXNET_DLL int MXNDArrayGetAuxType(NDArrayHandle handle, uint32_t, int*);
MXNET_DLL int MXNDArrayGetAuxType64(NDArrayHandle handle, int64_t, int*);
MXNET_DLL int MXNDArrayGetDataNDArray(NDArrayHandle handle, NDArrayHandle* out);
MXNET_DLL int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle* out);
MXNET_DLL int MXNDArrayGetGradState(NDArrayHandle handle, int* out);
MXNET_DLL int MXNDArrayGetShapeEx64(NDArrayHandle handle, int* out_dim, const int64_t** out_pdata);
MXNET_DLL int MXNDArrayGetSharedMemHandle(NDArrayHandle, int*, int*);
MXNET_DLL int MXNDArrayGetStorageType(NDArrayHandle handle, int* out_storage_type);
MXNET_DLL int MXNDArrayLoadFromRawBytes(const void* buf, size_t size, NDArrayHandle* out);
MXNET_DLL int MXNDArrayReshape64(NDArrayHandle handle, int ndim, dim_t* dims, bool reverse,
    NDArrayHandle* out);
MXNET_DLL int MXNDArraySaveRawBytes(NDArrayHandle handle, size_t* out_size, const char** out_buf);
MXNET_DLL int MXNDArraySetGradState(NDArrayHandle handle, int state);
MXNET_DLL int MXNDArraySlice64(NDArrayHandle handle, int64_t slice_begin, int64_t slice_end,
    NDArrayHandle* out);
MXNET_DLL int MXNDArraySyncCheckFormat(NDArrayHandle handle, const bool);
MXNET_DLL int MXNDArraySyncCopyFromNDArray(NDArrayHandle handle_dst, const NDArrayHandle handle_src,
    const int i);
MXNET_DLL int MXNDArrayToDLPack(NDArrayHandle, DLManagedTensorHandle*);
MXNET_DLL int MXNetFuncFree(void*);
MXNET_DLL int MXNetFuncGetGlobal(const char* name, void** out);
MXNET_DLL int MXNetFuncListGlobalNames(int* out_size, const char*** out_array);
MXNET_DLL int MXNetObjectFree(void*);
MXNET_DLL int MXOptimizeForBackend(SymbolHandle sym_handle, const char* backend_name, const int,
    SymbolHandle*, const mx_uint, NDArrayHandle*, const mx_uint, NDArrayHandle*, const mx_uint,
    const char**, const char**, const uint32_t, const char**, const int64_t*, const uint32_t*, const
    uint32_t, const char**, const int*, const uint32_t, const char**, const int*, bool, int*,
    NDArrayHandle**, char***, int*, NDArrayHandle**, char***);
MXNET_DLL int MXProcessProfilePause(int, int, KVStoreHandle);
MXNET_DLL int MXProfileAdjustCounter(ProfileHandle h, int64_t);
MXNET_DLL int MXProfileCreateCounter(ProfileHandle domain, const char* name, ProfileHandle* out);
MXNET_DLL int MXProfileCreateDomain(const char* domain, ProfileHandle* out);
MXNET_DLL int MXProfileCreateEvent(const char* name, ProfileHandle* out);
MXNET_DLL int MXProfileCreateFrame(ProfileHandle domain, const char* name, ProfileHandle* out);
MXNET_DLL int MXProfileCreateTask(ProfileHandle domain, const char* name, ProfileHandle* out);
MXNET_DLL int MXProfileDestroyHandle(ProfileHandle handle);
MXNET_DLL int MXProfileDurationStart(ProfileHandle h);
MXNET_DLL int MXProfileDurationStop(ProfileHandle h);
MXNET_DLL int MXProfilePause(int);
MXNET_DLL int MXProfileSetCounter(ProfileHandle h, uint64_t);
MXNET_DLL int MXProfileSetMarker(ProfileHandle domain, const char* name, const char* scope);
MXNET_DLL int MXQuantizeSymbol(SymbolHandle sym_handle, SymbolHandle*, const int*, const uint32_t,
    const char**, const uint32_t, const char**, const uint32_t, const char**, const char*, const
    bool, const char*, const char*, uint32_t*, const char***);
MXNET_DLL int MXRandomSeedContext(int seed, int dev_type, int dev_id);
MXNET_DLL int MXReducePrecisionSymbol(SymbolHandle sym_handle, SymbolHandle*, uint32_t, const int*,
    uint32_t, const int*, const int*, const int, const uint32_t, const uint32_t, const uint32_t,
    const uint32_t, const uint32_t, const uint32_t, const char**, const char**, const char**, const
    char**, const char**, const char**, const char**, const char**, const char**);
MXNET_DLL int MXRtcCudaKernelCall(CudaKernelHandle, int, void**, uint32_t, uint32_t, uint32_t,
    uint32_t, uint32_t, uint32_t, uint32_t);
MXNET_DLL int MXRtcCudaKernelCreate(CudaModuleHandle, const char*, int, int*, int*, int*,
    CudaKernelHandle*);
MXNET_DLL int MXRtcCudaKernelFree(CudaKernelHandle);
MXNET_DLL int MXRtcCudaModuleCreate(const char*, int, const char**, int, const char**,
    CudaModuleHandle*);
MXNET_DLL int MXRtcCudaModuleFree(CudaModuleHandle);
MXNET_DLL int MXSetCalibTableToQuantizedSymbol(SymbolHandle qsym_handle, const uint32_t, const
    char**, const float*, const float*, SymbolHandle*);
MXNET_DLL int MXSetEnv(const char* name, const char* value);
MXNET_DLL int MXSetIsNumpyShape(int is_np_shape, int* prev);
MXNET_DLL int MXSetProcessProfilerConfig(int num_params, const char* const* keys, const char* const*
    vals, KVStoreHandle);
MXNET_DLL int MXSetProcessProfilerState(int, int, KVStoreHandle);
MXNET_DLL int MXSetProfilerConfig(int num_params, const char* const* keys, const char* const* vals);
MXNET_DLL int MXSetProfilerState(int);
MXNET_DLL int MXShallowCopyNDArray(NDArrayHandle src, NDArrayHandle* out);
MXNET_DLL int MXShallowCopySymbol(SymbolHandle src, SymbolHandle* out);
MXNET_DLL int MXStorageEmptyCache(int dev_type, int dev_id);
MXNET_DLL int MXSymbolCutSubgraph(SymbolHandle sym, SymbolHandle**, int*);
MXNET_DLL int MXSymbolGetAttr(SymbolHandle symbol, const char* key, const char** out, int* success);
MXNET_DLL int MXSymbolGetChildren(SymbolHandle symbol, SymbolHandle* out);
MXNET_DLL int MXSymbolGetInputSymbols(SymbolHandle sym, SymbolHandle** inputs, int* input_size);
MXNET_DLL int MXSymbolGrad(SymbolHandle sym, uint32_t, const char**, SymbolHandle*);
MXNET_DLL int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys, const
    uint32_t* arg_ind_ptr, const int* arg_shape_data, uint32_t* in_shape_size, const int**
    in_shape_ndim, const int*** in_shape_data, uint32_t* out_shape_size, const int** out_shape_ndim,
    const int*** out_shape_data, uint32_t* aux_shape_size, const int** aux_shape_ndim, const int***
    aux_shape_data, int* complete);
MXNET_DLL int MXSymbolInferShapeEx64(SymbolHandle sym, uint32_t num_args, const char** keys, const
    int64_t* arg_ind_ptr, const int64_t* arg_shape_data, size_t* in_shape_size, const int**
    in_shape_ndim, const int64_t*** in_shape_data, size_t* out_shape_size, const int**
    out_shape_ndim, const int64_t*** out_shape_data, size_t* aux_shape_size, const int**
    aux_shape_ndim, const int64_t*** aux_shape_data, int* complete);
MXNET_DLL int MXSymbolInferShapePartialEx(SymbolHandle sym, uint32_t num_args, const char** keys,
    const uint32_t* arg_ind_ptr, const int* arg_shape_data, uint32_t* in_shape_size, const int**
    in_shape_ndim, const int*** in_shape_data, uint32_t* out_shape_size, const int** out_shape_ndim,
    const int*** out_shape_data, uint32_t* aux_shape_size, const int** aux_shape_ndim, const int***
    aux_shape_data, int* complete);
MXNET_DLL int MXSymbolInferShapePartialEx64(SymbolHandle sym, uint32_t num_args, const char** keys,
    const int64_t* arg_ind_ptr, const int64_t* arg_shape_data, size_t* in_shape_size, const int**
    in_shape_ndim, const int64_t*** in_shape_data, size_t* out_shape_size, const int**
    out_shape_ndim, const int64_t*** out_shape_data, size_t* aux_shape_size, const int**
    aux_shape_ndim, const int64_t*** aux_shape_data, int* complete);
MXNET_DLL int MXSymbolInferType(SymbolHandle sym, uint32_t num_args, const char** keys, const int*
    arg_type_data, uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size, const
    int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data, int* complete);
MXNET_DLL int MXSymbolInferTypePartial(SymbolHandle sym, uint32_t num_args, const char** keys, const
    int* arg_type_data, uint32_t* in_type_size, const int** in_type_data, uint32_t* out_type_size,
    const int** out_type_data, uint32_t* aux_type_size, const int** aux_type_data, int* complete);
MXNET_DLL int MXSymbolListAttr(SymbolHandle symbol, uint32_t* out_size, const char*** out);
MXNET_DLL int MXSymbolPrint(SymbolHandle symbol, const char** out_str);
MXNET_DLL int MXSymbolRemoveAmpCast(SymbolHandle sym_handle, SymbolHandle* ret_sym_handle);

MXNET_DLL int MXKVStorePushPullEx(KVStoreHandle handle, mx_uint vnum, const char** vkeys, mx_uint onum,
    const char** okeys, NDArrayHandle* vals, NDArrayHandle* outs, int priority);
MXNET_DLL int MXKVStorePushPull(KVStoreHandle handle, mx_uint vnum, const int* vkeys, mx_uint onum,
    const int* okeys, NDArrayHandle* vals, NDArrayHandle* outs, int priority);
MXNET_DLL int MXKVStoreBroadcastEx(KVStoreHandle handle, mx_uint vnum, const char** vkeys, mx_uint onum,
    const char** okeys, NDArrayHandle* vals, NDArrayHandle* outs, int priority);
MXNET_DLL int MXKVStoreBroadcast(KVStoreHandle handle, mx_uint vnum, const int* vkeys, mx_uint onum,
    const int* okeys, NDArrayHandle* vals, NDArrayHandle* outs, int priority);
MXNET_DLL int MXKVStorePullWithSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals,
    int priority, bool ignore_sparse);
MXNET_DLL int MXKVStorePullWithSparseEx(KVStoreHandle handle, uint32_t num, const char** keys,
    NDArrayHandle* vals, int priority, bool ignore_sparse);
MXNET_DLL int MXKVStorePullRowSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals,
    const NDArrayHandle* row_ids, int priority);
MXNET_DLL int MXKVStorePullRowSparseEx(KVStoreHandle handle, uint32_t num, const char** keys,
    NDArrayHandle* vals, const NDArrayHandle* row_ids, int priority);
MXNET_DLL int MXKVStoreSetGradientCompression(KVStoreHandle handle, uint32_t num_params, const char** keys,
    const char** vals);
MXNET_DLL int MXKVStoreSetUpdaterEx(KVStoreHandle handle, MXKVStoreUpdater updater,
    MXKVStoreStrUpdater str_updater, void* updater_handle);

#ifdef __cplusplus
}
#endif

#endif /* MXNET_C_API_H_ */
