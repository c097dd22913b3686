// Compile-and-run checks of the public headers: include guards, CUDA typedef coexistence, enum values and
// EnumMax against TensorRT 10.16, layouts, exact method signatures, and user-implemented callback classes.
#include <gtest/gtest.h>
#include <kiln/kiln.h>
#include <kiln/kiln.h>  // Second inclusion on purpose: the include guards must make it a no-op.
#include <kiln/kiln_base.h>
#include <kiln/kiln_plugin.h>
#include <kiln/kiln_runtime.h>
#include <kiln/kiln_version.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

// Defined in plugin_header_cxx17.cc, which includes only kiln_plugin.h and is compiled as C++17.
char const* kilnPluginHeaderCxx17Kind();

// CUDA's driver_types.h declares exactly these typedefs. Repeating them after the Kiln headers must compile,
// which is what happens when an application includes <cuda_runtime_api.h> after <kiln/kiln.h>.
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;

namespace kiln {
namespace {

template <typename E>
constexpr int32_t v(E e) {
  return static_cast<int32_t>(e);
}

//
// Version macros
//

static_assert(KILN_VERSION_MAJOR == 0);
static_assert(KILN_VERSION_MINOR == 1);
static_assert(KILN_VERSION_PATCH == 0);
static_assert(KILN_VERSION == 100 && KILN_VERSION_INT(10, 16, 1) == 101601);
static_assert(KILN_TRT_API_MAJOR == 10 && KILN_TRT_API_MINOR == 16);
static_assert(KILN_TRT_API_VERSION == 101600);

//
// Layouts
//

static_assert(Dims::MAX_DIMS == 8);
static_assert(std::is_same_v<Dims, Dims64>);
static_assert(std::is_same_v<decltype(Dims::d[0]), int64_t&>);
static_assert(sizeof(Dims) == 72 && alignof(Dims) == 8);
static_assert(offsetof(Dims, nbDims) == 0 && offsetof(Dims, d) == 8);
static_assert(std::is_trivially_copyable_v<Dims> && std::is_standard_layout_v<Dims>);
static_assert(std::is_aggregate_v<Dims>);
static_assert(sizeof(Dims2) == sizeof(Dims) && sizeof(Dims4) == sizeof(Dims) &&
              sizeof(DimsHW) == sizeof(Dims));
static_assert(std::is_base_of_v<Dims, Dims2> && std::is_base_of_v<Dims2, DimsHW> &&
              std::is_base_of_v<Dims2, Dims3> && std::is_base_of_v<Dims3, Dims4>);
static_assert(sizeof(Permutation) == sizeof(int32_t) * Dims::MAX_DIMS);
static_assert(sizeof(Weights) == 24 && offsetof(Weights, type) == 0 && offsetof(Weights, values) == 8 &&
              offsetof(Weights, count) == 16);
static_assert(std::is_aggregate_v<Weights> && std::is_aggregate_v<InterfaceInfo>);
static_assert(std::is_same_v<AsciiChar, char>);
static_assert(std::is_pointer_v<cudaStream_t> && std::is_pointer_v<cudaEvent_t>);
static_assert(std::is_same_v<TacticSources, uint32_t>);
static_assert(std::is_same_v<BuilderFlags, uint32_t>);
static_assert(std::is_same_v<NetworkDefinitionCreationFlags, uint32_t>);
static_assert(std::is_same_v<TensorFormats, uint32_t>);
static_assert(std::is_same_v<AllocatorFlags, uint32_t>);
static_assert(std::is_same_v<IErrorRecorder::RefCount, int32_t> &&
              std::is_same_v<IErrorRecorder::ErrorDesc, char const*> &&
              IErrorRecorder::kMAX_DESC_LENGTH == 127U);

//
// Enum values (TensorRT 10.16) and EnumMax
//

static_assert(std::is_same_v<std::underlying_type_t<DataType>, int32_t>);
static_assert(v(DataType::kFLOAT) == 0 && v(DataType::kHALF) == 1 && v(DataType::kINT8) == 2 &&
              v(DataType::kINT32) == 3 && v(DataType::kBOOL) == 4 && v(DataType::kUINT8) == 5 &&
              v(DataType::kFP8) == 6 && v(DataType::kBF16) == 7 && v(DataType::kINT64) == 8 &&
              v(DataType::kINT4) == 9 && v(DataType::kFP4) == 10 && v(DataType::kE8M0) == 11);
static_assert(EnumMax<DataType>() == 12);

static_assert(v(TensorFormat::kLINEAR) == 0 && v(TensorFormat::kCHW2) == 1 && v(TensorFormat::kHWC8) == 2 &&
              v(TensorFormat::kCHW4) == 3 && v(TensorFormat::kCHW16) == 4 && v(TensorFormat::kCHW32) == 5 &&
              v(TensorFormat::kDHWC8) == 6 && v(TensorFormat::kCDHW32) == 7 && v(TensorFormat::kHWC) == 8 &&
              v(TensorFormat::kDLA_LINEAR) == 9 && v(TensorFormat::kDLA_HWC4) == 10 &&
              v(TensorFormat::kHWC16) == 11 && v(TensorFormat::kDHWC) == 12);
static_assert(EnumMax<TensorFormat>() == 13);

static_assert(v(TensorIOMode::kNONE) == 0 && v(TensorIOMode::kINPUT) == 1 && v(TensorIOMode::kOUTPUT) == 2);
static_assert(EnumMax<TensorIOMode>() == 3);
static_assert(v(TensorLocation::kDEVICE) == 0 && v(TensorLocation::kHOST) == 1 &&
              EnumMax<TensorLocation>() == 2);

static_assert(v(DeviceType::kGPU) == 0 && v(DeviceType::kDLA) == 1 && v(DeviceType::kCPU) == 2);
static_assert(EnumMax<DeviceType>() == 3);  // TensorRT: 2 (kCPU is a Kiln extension).

static_assert(v(TacticSource::kCUBLAS) == 0 && v(TacticSource::kCUBLAS_LT) == 1 &&
              v(TacticSource::kCUDNN) == 2 && v(TacticSource::kEDGE_MASK_CONVOLUTIONS) == 3 &&
              v(TacticSource::kJIT_CONVOLUTIONS) == 4);
static_assert(v(TacticSource::kKILN) == 5 && v(TacticSource::kONEDNN) == 6 &&
              v(TacticSource::kREFERENCE) == 7);
static_assert(EnumMax<TacticSource>() == 8);  // TensorRT: 5.

static_assert(v(APILanguage::kCPP) == 0 && v(APILanguage::kPYTHON) == 1 && EnumMax<APILanguage>() == 2);

static_assert(v(ILogger::Severity::kINTERNAL_ERROR) == 0 && v(ILogger::Severity::kERROR) == 1 &&
              v(ILogger::Severity::kWARNING) == 2 && v(ILogger::Severity::kINFO) == 3 &&
              v(ILogger::Severity::kVERBOSE) == 4);
static_assert(EnumMax<ILogger::Severity>() == 5);

static_assert(v(ErrorCode::kSUCCESS) == 0 && v(ErrorCode::kUNSPECIFIED_ERROR) == 1 &&
              v(ErrorCode::kINTERNAL_ERROR) == 2 && v(ErrorCode::kINVALID_ARGUMENT) == 3 &&
              v(ErrorCode::kINVALID_CONFIG) == 4 && v(ErrorCode::kFAILED_ALLOCATION) == 5 &&
              v(ErrorCode::kFAILED_INITIALIZATION) == 6 && v(ErrorCode::kFAILED_EXECUTION) == 7 &&
              v(ErrorCode::kFAILED_COMPUTATION) == 8 && v(ErrorCode::kINVALID_STATE) == 9 &&
              v(ErrorCode::kUNSUPPORTED_STATE) == 10);
static_assert(EnumMax<ErrorCode>() == 11);

static_assert(v(AllocatorFlag::kRESIZABLE) == 0 && EnumMax<AllocatorFlag>() == 1);

static_assert(v(EngineCapability::kSTANDARD) == 0 && v(EngineCapability::kSAFETY) == 1 &&
              v(EngineCapability::kDLA_STANDALONE) == 2 && EnumMax<EngineCapability>() == 3);
static_assert(v(ExecutionContextAllocationStrategy::kSTATIC) == 0 &&
              v(ExecutionContextAllocationStrategy::kON_PROFILE_CHANGE) == 1 &&
              v(ExecutionContextAllocationStrategy::kUSER_MANAGED) == 2 &&
              EnumMax<ExecutionContextAllocationStrategy>() == 3);
static_assert(v(ProfilingVerbosity::kLAYER_NAMES_ONLY) == 0 && v(ProfilingVerbosity::kNONE) == 1 &&
              v(ProfilingVerbosity::kDETAILED) == 2 && EnumMax<ProfilingVerbosity>() == 3);
static_assert(v(LayerInformationFormat::kONELINE) == 0 && v(LayerInformationFormat::kJSON) == 1 &&
              EnumMax<LayerInformationFormat>() == 2);
static_assert(v(OptProfileSelector::kMIN) == 0 && v(OptProfileSelector::kOPT) == 1 &&
              v(OptProfileSelector::kMAX) == 2 && EnumMax<OptProfileSelector>() == 3);
static_assert(v(MemoryPoolType::kWORKSPACE) == 0 && v(MemoryPoolType::kDLA_MANAGED_SRAM) == 1 &&
              v(MemoryPoolType::kDLA_LOCAL_DRAM) == 2 && v(MemoryPoolType::kDLA_GLOBAL_DRAM) == 3 &&
              v(MemoryPoolType::kTACTIC_DRAM) == 4 && v(MemoryPoolType::kTACTIC_SHARED_MEMORY) == 5 &&
              EnumMax<MemoryPoolType>() == 6);

static_assert(v(BuilderFlag::kFP16) == 0 && v(BuilderFlag::kINT8) == 1 && v(BuilderFlag::kDEBUG) == 2 &&
              v(BuilderFlag::kGPU_FALLBACK) == 3 && v(BuilderFlag::kREFIT) == 4 &&
              v(BuilderFlag::kDISABLE_TIMING_CACHE) == 5 && v(BuilderFlag::kTF32) == 6 &&
              v(BuilderFlag::kSPARSE_WEIGHTS) == 7 && v(BuilderFlag::kSAFETY_SCOPE) == 8 &&
              v(BuilderFlag::kOBEY_PRECISION_CONSTRAINTS) == 9 &&
              v(BuilderFlag::kPREFER_PRECISION_CONSTRAINTS) == 10 && v(BuilderFlag::kDIRECT_IO) == 11 &&
              v(BuilderFlag::kREJECT_EMPTY_ALGORITHMS) == 12 && v(BuilderFlag::kVERSION_COMPATIBLE) == 13 &&
              v(BuilderFlag::kEXCLUDE_LEAN_RUNTIME) == 14 && v(BuilderFlag::kFP8) == 15 &&
              v(BuilderFlag::kERROR_ON_TIMING_CACHE_MISS) == 16 && v(BuilderFlag::kBF16) == 17 &&
              v(BuilderFlag::kDISABLE_COMPILATION_CACHE) == 18 && v(BuilderFlag::kSTRIP_PLAN) == 19 &&
              v(BuilderFlag::kREFIT_IDENTICAL) == 20 && v(BuilderFlag::kWEIGHT_STREAMING) == 21 &&
              v(BuilderFlag::kINT4) == 22 && v(BuilderFlag::kREFIT_INDIVIDUAL) == 23 &&
              v(BuilderFlag::kSTRICT_NANS) == 24 && v(BuilderFlag::kMONITOR_MEMORY) == 25 &&
              v(BuilderFlag::kFP4) == 26 && v(BuilderFlag::kEDITABLE_TIMING_CACHE) == 27 &&
              v(BuilderFlag::kDISTRIBUTIVE_INDEPENDENCE) == 28);
static_assert(EnumMax<BuilderFlag>() == 29);

static_assert(v(NetworkDefinitionCreationFlag::kEXPLICIT_BATCH) == 0 &&
              v(NetworkDefinitionCreationFlag::kSTRONGLY_TYPED) == 1 &&
              v(NetworkDefinitionCreationFlag::kPREFER_AOT_PYTHON_PLUGINS) == 2 &&
              v(NetworkDefinitionCreationFlag::kPREFER_JIT_PYTHON_PLUGINS) == 3 &&
              EnumMax<NetworkDefinitionCreationFlag>() == 4);
static_assert(v(HardwareCompatibilityLevel::kNONE) == 0 && v(HardwareCompatibilityLevel::kAMPERE_PLUS) == 1 &&
              v(HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY) == 2 &&
              EnumMax<HardwareCompatibilityLevel>() == 3);

static_assert(
    v(LayerType::kCONVOLUTION) == 0 && v(LayerType::kCAST) == 1 && v(LayerType::kACTIVATION) == 2 &&
    v(LayerType::kPOOLING) == 3 && v(LayerType::kLRN) == 4 && v(LayerType::kSCALE) == 5 &&
    v(LayerType::kSOFTMAX) == 6 && v(LayerType::kDECONVOLUTION) == 7 && v(LayerType::kCONCATENATION) == 8 &&
    v(LayerType::kELEMENTWISE) == 9 && v(LayerType::kPLUGIN) == 10 && v(LayerType::kUNARY) == 11 &&
    v(LayerType::kPADDING) == 12 && v(LayerType::kSHUFFLE) == 13 && v(LayerType::kREDUCE) == 14 &&
    v(LayerType::kTOPK) == 15 && v(LayerType::kGATHER) == 16 && v(LayerType::kMATRIX_MULTIPLY) == 17 &&
    v(LayerType::kRAGGED_SOFTMAX) == 18 && v(LayerType::kCONSTANT) == 19 && v(LayerType::kIDENTITY) == 20 &&
    v(LayerType::kPLUGIN_V2) == 21 && v(LayerType::kSLICE) == 22 && v(LayerType::kSHAPE) == 23 &&
    v(LayerType::kPARAMETRIC_RELU) == 24 && v(LayerType::kRESIZE) == 25 && v(LayerType::kTRIP_LIMIT) == 26 &&
    v(LayerType::kRECURRENCE) == 27 && v(LayerType::kITERATOR) == 28 && v(LayerType::kLOOP_OUTPUT) == 29 &&
    v(LayerType::kSELECT) == 30 && v(LayerType::kFILL) == 31 && v(LayerType::kQUANTIZE) == 32 &&
    v(LayerType::kDEQUANTIZE) == 33 && v(LayerType::kCONDITION) == 34 &&
    v(LayerType::kCONDITIONAL_INPUT) == 35 && v(LayerType::kCONDITIONAL_OUTPUT) == 36 &&
    v(LayerType::kSCATTER) == 37 && v(LayerType::kEINSUM) == 38 && v(LayerType::kASSERTION) == 39 &&
    v(LayerType::kONE_HOT) == 40 && v(LayerType::kNON_ZERO) == 41 && v(LayerType::kGRID_SAMPLE) == 42 &&
    v(LayerType::kNMS) == 43 && v(LayerType::kREVERSE_SEQUENCE) == 44 && v(LayerType::kNORMALIZATION) == 45 &&
    v(LayerType::kPLUGIN_V3) == 46 && v(LayerType::kSQUEEZE) == 47 && v(LayerType::kUNSQUEEZE) == 48 &&
    v(LayerType::kCUMULATIVE) == 49 && v(LayerType::kDYNAMIC_QUANTIZE) == 50 &&
    v(LayerType::kATTENTION_INPUT) == 51 && v(LayerType::kATTENTION_OUTPUT) == 52 &&
    v(LayerType::kROTARY_EMBEDDING) == 53 && v(LayerType::kKVCACHE_UPDATE) == 54 &&
    v(LayerType::kMOE) == 55 && v(LayerType::kDIST_COLLECTIVE) == 56);
static_assert(EnumMax<LayerType>() == 57);

static_assert(v(ActivationType::kRELU) == 0 && v(ActivationType::kSIGMOID) == 1 &&
              v(ActivationType::kTANH) == 2 && v(ActivationType::kLEAKY_RELU) == 3 &&
              v(ActivationType::kELU) == 4 && v(ActivationType::kSELU) == 5 &&
              v(ActivationType::kSOFTSIGN) == 6 && v(ActivationType::kSOFTPLUS) == 7 &&
              v(ActivationType::kCLIP) == 8 && v(ActivationType::kHARD_SIGMOID) == 9 &&
              v(ActivationType::kSCALED_TANH) == 10 && v(ActivationType::kTHRESHOLDED_RELU) == 11 &&
              v(ActivationType::kGELU_ERF) == 12 && v(ActivationType::kGELU_TANH) == 13);
static_assert(EnumMax<ActivationType>() == 14);

static_assert(v(PaddingMode::kEXPLICIT_ROUND_DOWN) == 0 && v(PaddingMode::kEXPLICIT_ROUND_UP) == 1 &&
              v(PaddingMode::kSAME_UPPER) == 2 && v(PaddingMode::kSAME_LOWER) == 3 &&
              EnumMax<PaddingMode>() == 4);
static_assert(v(PoolingType::kMAX) == 0 && v(PoolingType::kAVERAGE) == 1 &&
              v(PoolingType::kMAX_AVERAGE_BLEND) == 2 && EnumMax<PoolingType>() == 3);

static_assert(v(ElementWiseOperation::kSUM) == 0 && v(ElementWiseOperation::kPROD) == 1 &&
              v(ElementWiseOperation::kMAX) == 2 && v(ElementWiseOperation::kMIN) == 3 &&
              v(ElementWiseOperation::kSUB) == 4 && v(ElementWiseOperation::kDIV) == 5 &&
              v(ElementWiseOperation::kPOW) == 6 && v(ElementWiseOperation::kFLOOR_DIV) == 7 &&
              v(ElementWiseOperation::kAND) == 8 && v(ElementWiseOperation::kOR) == 9 &&
              v(ElementWiseOperation::kXOR) == 10 && v(ElementWiseOperation::kEQUAL) == 11 &&
              v(ElementWiseOperation::kGREATER) == 12 && v(ElementWiseOperation::kLESS) == 13);
static_assert(EnumMax<ElementWiseOperation>() == 14);

static_assert(v(UnaryOperation::kEXP) == 0 && v(UnaryOperation::kLOG) == 1 && v(UnaryOperation::kSQRT) == 2 &&
              v(UnaryOperation::kRECIP) == 3 && v(UnaryOperation::kABS) == 4 &&
              v(UnaryOperation::kNEG) == 5 && v(UnaryOperation::kSIN) == 6 && v(UnaryOperation::kCOS) == 7 &&
              v(UnaryOperation::kTAN) == 8 && v(UnaryOperation::kSINH) == 9 &&
              v(UnaryOperation::kCOSH) == 10 && v(UnaryOperation::kASIN) == 11 &&
              v(UnaryOperation::kACOS) == 12 && v(UnaryOperation::kATAN) == 13 &&
              v(UnaryOperation::kASINH) == 14 && v(UnaryOperation::kACOSH) == 15 &&
              v(UnaryOperation::kATANH) == 16 && v(UnaryOperation::kCEIL) == 17 &&
              v(UnaryOperation::kFLOOR) == 18 && v(UnaryOperation::kERF) == 19 &&
              v(UnaryOperation::kNOT) == 20 && v(UnaryOperation::kSIGN) == 21 &&
              v(UnaryOperation::kROUND) == 22 && v(UnaryOperation::kISINF) == 23 &&
              v(UnaryOperation::kISNAN) == 24);
static_assert(EnumMax<UnaryOperation>() == 25);

static_assert(v(MatrixOperation::kNONE) == 0 && v(MatrixOperation::kTRANSPOSE) == 1 &&
              v(MatrixOperation::kVECTOR) == 2 && EnumMax<MatrixOperation>() == 3);
static_assert(v(SampleMode::kSTRICT_BOUNDS) == 0 && v(SampleMode::kWRAP) == 1 && v(SampleMode::kCLAMP) == 2 &&
              v(SampleMode::kFILL) == 3 && v(SampleMode::kREFLECT) == 4 && EnumMax<SampleMode>() == 5);
static_assert(v(ReduceOperation::kSUM) == 0 && v(ReduceOperation::kPROD) == 1 &&
              v(ReduceOperation::kMAX) == 2 && v(ReduceOperation::kMIN) == 3 &&
              v(ReduceOperation::kAVG) == 4 && EnumMax<ReduceOperation>() == 5);
static_assert(v(ScaleMode::kUNIFORM) == 0 && v(ScaleMode::kCHANNEL) == 1 && v(ScaleMode::kELEMENTWISE) == 2 &&
              EnumMax<ScaleMode>() == 3);
static_assert(v(GatherMode::kDEFAULT) == 0 && v(GatherMode::kELEMENT) == 1 && v(GatherMode::kND) == 2 &&
              EnumMax<GatherMode>() == 3);
static_assert(v(InterpolationMode::kNEAREST) == 0 && v(InterpolationMode::kLINEAR) == 1 &&
              v(InterpolationMode::kCUBIC) == 2 && EnumMax<InterpolationMode>() == 3);
static_assert(v(ResizeCoordinateTransformation::kALIGN_CORNERS) == 0 &&
              v(ResizeCoordinateTransformation::kASYMMETRIC) == 1 &&
              v(ResizeCoordinateTransformation::kHALF_PIXEL) == 2 && EnumMax<ResizeCoordinateTransformation>() == 3);
static_assert(v(ResizeSelector::kFORMULA) == 0 && v(ResizeSelector::kUPPER) == 1 && EnumMax<ResizeSelector>() == 2);
static_assert(v(ResizeRoundMode::kHALF_UP) == 0 && v(ResizeRoundMode::kHALF_DOWN) == 1 &&
              v(ResizeRoundMode::kFLOOR) == 2 && v(ResizeRoundMode::kCEIL) == 3 && EnumMax<ResizeRoundMode>() == 4);
static_assert(v(TopKOperation::kMAX) == 0 && v(TopKOperation::kMIN) == 1 && EnumMax<TopKOperation>() == 2);
static_assert(v(FillOperation::kLINSPACE) == 0 && v(FillOperation::kRANDOM_UNIFORM) == 1 &&
              v(FillOperation::kRANDOM_NORMAL) == 2 && EnumMax<FillOperation>() == 3);
static_assert(v(ScatterMode::kELEMENT) == 0 && v(ScatterMode::kND) == 1 && EnumMax<ScatterMode>() == 2);
static_assert(v(ScatterReduction::kNONE) == 0 && v(ScatterReduction::kADD) == 1 && v(ScatterReduction::kMUL) == 2 &&
              v(ScatterReduction::kMAX) == 3 && v(ScatterReduction::kMIN) == 4 &&
              EnumMax<ScatterReduction>() == 5);  // Kiln extension
static_assert(v(CumulativeOperation::kSUM) == 0 && EnumMax<CumulativeOperation>() == 1);
static_assert(v(BoundingBoxFormat::kCORNER_PAIRS) == 0 && v(BoundingBoxFormat::kCENTER_SIZES) == 1 &&
              EnumMax<BoundingBoxFormat>() == 2);
static_assert(v(LoopOutput::kLAST_VALUE) == 0 && v(LoopOutput::kCONCATENATE) == 1 && v(LoopOutput::kREVERSE) == 2 &&
              EnumMax<LoopOutput>() == 3);
static_assert(v(TripLimit::kCOUNT) == 0 && v(TripLimit::kWHILE) == 1 && EnumMax<TripLimit>() == 2);

// Layer-breadth interfaces: hierarchy and a few exact signatures.
static_assert(std::is_base_of_v<ILayer, IDeconvolutionLayer> && std::is_base_of_v<ILayer, IResizeLayer> &&
              std::is_base_of_v<ILayer, ITopKLayer> && std::is_base_of_v<ILayer, IDynamicQuantizeLayer> &&
              std::is_base_of_v<IIfConditionalBoundaryLayer, IConditionLayer> &&
              std::is_base_of_v<IIfConditionalBoundaryLayer, IIfConditionalInputLayer> &&
              std::is_base_of_v<IIfConditionalBoundaryLayer, IIfConditionalOutputLayer> &&
              std::is_base_of_v<ILoopBoundaryLayer, IRecurrenceLayer> &&
              std::is_base_of_v<ILoopBoundaryLayer, ITripLimitLayer> &&
              std::is_base_of_v<ILoopBoundaryLayer, IIteratorLayer> &&
              std::is_base_of_v<ILoopBoundaryLayer, ILoopOutputLayer> && std::is_base_of_v<INoCopy, ILoop> &&
              std::is_base_of_v<INoCopy, IIfConditional> && std::is_base_of_v<IVersionedInterface, IOutputAllocator>);
static_assert(std::is_same_v<decltype(static_cast<ITopKLayer* (INetworkDefinition::*)(
                                          ITensor&, TopKOperation, int32_t, uint32_t, DataType) noexcept>(
                                          &INetworkDefinition::addTopK)),
                             ITopKLayer* (INetworkDefinition::*)(ITensor&, TopKOperation, int32_t, uint32_t,
                                                                 DataType) noexcept>);
static_assert(std::is_same_v<decltype(&INetworkDefinition::addDeconvolutionNd),
                             IDeconvolutionLayer* (INetworkDefinition::*)(ITensor&, int64_t, Dims, Weights,
                                                                          Weights) noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::setOutputAllocator),
                             bool (IExecutionContext::*)(char const*, IOutputAllocator*) noexcept>);
static_assert(std::is_same_v<decltype(&IOutputAllocator::notifyShape),
                             void (IOutputAllocator::*)(char const*, Dims const&) noexcept>);

//
// Library interfaces: abstract, not copyable or movable, public virtual noexcept destructor, typed hierarchy.
//

template <typename T>
constexpr bool kIsLibraryInterface =
    std::is_abstract_v<T>&& std::is_polymorphic_v<T>&& std::has_virtual_destructor_v<T>&&
        std::is_nothrow_destructible_v<T> &&
    !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> && !std::is_move_constructible_v<T> &&
    !std::is_move_assignable_v<T> && std::is_base_of_v<INoCopy, T>;

static_assert(kIsLibraryInterface<IHostMemory> && kIsLibraryInterface<IRuntime> &&
              kIsLibraryInterface<ICudaEngine> && kIsLibraryInterface<IExecutionContext> &&
              kIsLibraryInterface<IEngineInspector> && kIsLibraryInterface<ITensor> &&
              kIsLibraryInterface<ILayer> && kIsLibraryInterface<INetworkDefinition> &&
              kIsLibraryInterface<IOptimizationProfile> && kIsLibraryInterface<IBuilderConfig> &&
              kIsLibraryInterface<IBuilder>);

template <typename... Layers>
constexpr bool kAreLayers = ((kIsLibraryInterface<Layers> && std::is_base_of_v<ILayer, Layers>)&&...);

static_assert(kAreLayers<IConvolutionLayer, IActivationLayer, IPoolingLayer, IElementWiseLayer, IUnaryLayer,
                         IMatrixMultiplyLayer, IShuffleLayer, IConcatenationLayer, ISliceLayer, IReduceLayer,
                         ISoftMaxLayer, IScaleLayer, INormalizationLayer, IConstantLayer, IIdentityLayer,
                         ICastLayer, IGatherLayer, IShapeLayer>);

// The destructor is public, so an owned object can be released with plain delete.
static_assert(std::is_destructible_v<IRuntime> && std::is_destructible_v<IBuilder> &&
              std::is_destructible_v<IHostMemory> && std::is_destructible_v<IExecutionContext>);

// User-implemented interfaces are abstract but not INoCopy.
static_assert(std::is_abstract_v<ILogger> && std::is_abstract_v<IProfiler> &&
              std::is_abstract_v<IGpuAllocator> && std::is_abstract_v<IErrorRecorder> &&
              std::is_abstract_v<IProgressMonitor>);
static_assert(std::is_base_of_v<IVersionedInterface, IGpuAllocator> &&
              std::is_base_of_v<IVersionedInterface, IErrorRecorder> &&
              std::is_base_of_v<IVersionedInterface, IProgressMonitor> &&
              !std::is_base_of_v<INoCopy, ILogger>);

//
// Exact member signatures (const, noexcept, parameter and return types) of a representative set.
//

static_assert(std::is_same_v<decltype(&IRuntime::deserializeCudaEngine),
                             ICudaEngine* (IRuntime::*)(void const*, std::size_t) noexcept>);
static_assert(std::is_same_v<decltype(&IRuntime::setMemoryLimit), bool (IRuntime::*)(int64_t) noexcept>);
static_assert(std::is_same_v<decltype(&IRuntime::getMemoryLimit), int64_t (IRuntime::*)() const noexcept>);
static_assert(std::is_same_v<decltype(&IRuntime::getLogger), ILogger* (IRuntime::*)() const noexcept>);
static_assert(std::is_same_v<decltype(&ICudaEngine::getTensorShape),
                             Dims (ICudaEngine::*)(char const*) const noexcept>);
static_assert(
    std::is_same_v<decltype(&ICudaEngine::serialize), IHostMemory* (ICudaEngine::*)() const noexcept>);
static_assert(
    std::is_same_v<decltype(&ICudaEngine::createExecutionContext),
                   IExecutionContext* (ICudaEngine::*)(ExecutionContextAllocationStrategy) noexcept>);
static_assert(
    std::is_same_v<decltype(&ICudaEngine::getDeviceMemorySize), size_t (ICudaEngine::*)() const noexcept>);
static_assert(
    std::is_same_v<decltype(&ICudaEngine::getDeviceMemorySizeV2), int64_t (ICudaEngine::*)() const noexcept>);
static_assert(std::is_same_v<decltype(&ICudaEngine::getProfileShape),
                             Dims (ICudaEngine::*)(char const*, int32_t, OptProfileSelector) const noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::getEngine),
                             ICudaEngine const& (IExecutionContext::*)() const noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::setInputShape),
                             bool (IExecutionContext::*)(char const*, Dims const&) noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::setDeviceMemoryV2),
                             void (IExecutionContext::*)(void*, int64_t) noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::executeV2),
                             bool (IExecutionContext::*)(void* const*) noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::enqueueV3),
                             bool (IExecutionContext::*)(cudaStream_t) noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::inferShapes),
                             int32_t (IExecutionContext::*)(int32_t, char const**) noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::getTensorAddress),
                             void const* (IExecutionContext::*)(char const*) const noexcept>);
static_assert(std::is_same_v<decltype(&IExecutionContext::updateDeviceMemorySizeForShapes),
                             size_t (IExecutionContext::*)() noexcept>);
static_assert(
    std::is_same_v<decltype(&IEngineInspector::getLayerInformation),
                   char const* (IEngineInspector::*)(int32_t, LayerInformationFormat) const noexcept>);
static_assert(std::is_same_v<decltype(&INetworkDefinition::addConvolutionNd),
                             IConvolutionLayer* (INetworkDefinition::*)(ITensor&, int64_t, Dims const&,
                                                                        Weights, Weights) noexcept>);
static_assert(
    std::is_same_v<decltype(&INetworkDefinition::addConcatenation),
                   IConcatenationLayer* (INetworkDefinition::*)(ITensor* const*, int32_t) noexcept>);
static_assert(std::is_same_v<decltype(&INetworkDefinition::addReduce),
                             IReduceLayer* (INetworkDefinition::*)(ITensor&, ReduceOperation, uint32_t,
                                                                   bool) noexcept>);
static_assert(std::is_same_v<decltype(&INetworkDefinition::getBuilder),
                             IBuilder& (INetworkDefinition::*)() const noexcept>);
static_assert(std::is_same_v<decltype(&IShuffleLayer::setFirstTranspose),
                             void (IShuffleLayer::*)(Permutation) noexcept>);
static_assert(std::is_same_v<decltype(&IShuffleLayer::getFirstTranspose),
                             Permutation (IShuffleLayer::*)() const noexcept>);
static_assert(std::is_same_v<decltype(&IMatrixMultiplyLayer::getOperation),
                             MatrixOperation (IMatrixMultiplyLayer::*)(int32_t) const noexcept>);
static_assert(std::is_same_v<decltype(&IConvolutionLayer::setNbOutputMaps),
                             void (IConvolutionLayer::*)(int64_t) noexcept>);
static_assert(std::is_same_v<decltype(&IOptimizationProfile::setShapeValuesV2),
                             bool (IOptimizationProfile::*)(char const*, OptProfileSelector, int64_t const*,
                                                            int32_t) noexcept>);
static_assert(std::is_same_v<decltype(&IBuilderConfig::setMemoryPoolLimit),
                             void (IBuilderConfig::*)(MemoryPoolType, std::size_t) noexcept>);
static_assert(std::is_same_v<decltype(&IBuilderConfig::getBuilderOptimizationLevel),
                             int32_t (IBuilderConfig::*)() noexcept>);  // Non-const, as in TensorRT.
static_assert(std::is_same_v<decltype(&IBuilderConfig::setProfileStream),
                             void (IBuilderConfig::*)(cudaStream_t) noexcept>);
static_assert(std::is_same_v<decltype(&IBuilder::buildSerializedNetwork),
                             IHostMemory* (IBuilder::*)(INetworkDefinition&, IBuilderConfig&) noexcept>);
static_assert(std::is_same_v<decltype(&IBuilder::createNetworkV2),
                             INetworkDefinition* (IBuilder::*)(NetworkDefinitionCreationFlags) noexcept>);
static_assert(std::is_same_v<decltype(&IBuilder::setMemoryLimit), bool (IBuilder::*)(int64_t) noexcept>);
static_assert(std::is_same_v<decltype(&createInferRuntime), IRuntime* (*)(ILogger&) noexcept>);
static_assert(std::is_same_v<decltype(&createInferBuilder), IBuilder* (*)(ILogger&) noexcept>);
static_assert(std::is_same_v<decltype(&getInferLibVersion), int32_t (*)() noexcept>);
static_assert(
    std::is_same_v<decltype(&IGpuAllocator::allocateAsync),
                   void* (IGpuAllocator::*)(uint64_t, uint64_t, AllocatorFlags, cudaStream_t) noexcept>);
static_assert(
    std::is_same_v<decltype(&ILogger::log), void (ILogger::*)(ILogger::Severity, AsciiChar const*) noexcept>);

//
// Plugin interfaces (kiln_plugin.h, TensorRT 10.16 values and signatures)
//

static_assert(v(PluginFieldType::kFLOAT16) == 0 && v(PluginFieldType::kFLOAT32) == 1 &&
              v(PluginFieldType::kFLOAT64) == 2 && v(PluginFieldType::kINT8) == 3 &&
              v(PluginFieldType::kINT16) == 4 && v(PluginFieldType::kINT32) == 5 &&
              v(PluginFieldType::kCHAR) == 6 && v(PluginFieldType::kDIMS) == 7 &&
              v(PluginFieldType::kUNKNOWN) == 8 && v(PluginFieldType::kBF16) == 9 &&
              v(PluginFieldType::kINT64) == 10 && v(PluginFieldType::kFP8) == 11 &&
              v(PluginFieldType::kINT4) == 12);
static_assert(EnumMax<PluginFieldType>() == 13);
static_assert(v(DimensionOperation::kSUM) == 0 && v(DimensionOperation::kPROD) == 1 &&
              v(DimensionOperation::kMAX) == 2 && v(DimensionOperation::kMIN) == 3 &&
              v(DimensionOperation::kSUB) == 4 && v(DimensionOperation::kEQUAL) == 5 &&
              v(DimensionOperation::kLESS) == 6 && v(DimensionOperation::kFLOOR_DIV) == 7 &&
              v(DimensionOperation::kCEIL_DIV) == 8 && EnumMax<DimensionOperation>() == 9);
static_assert(v(PluginCapabilityType::kCORE) == 0 && v(PluginCapabilityType::kBUILD) == 1 &&
              v(PluginCapabilityType::kRUNTIME) == 2);
static_assert(v(TensorRTPhase::kBUILD) == 0 && v(TensorRTPhase::kRUNTIME) == 1);
static_assert(static_cast<int>(PluginVersion::kV2_DYNAMICEXT) == 3 &&
              static_cast<int>(PluginVersion::kV2_DYNAMICEXT_PYTHON) == 0x43);
static_assert(std::is_same_v<PluginFormat, TensorFormat>);
static_assert(IPluginV2DynamicExt::kFORMAT_COMBINATION_LIMIT == 100 &&
              IPluginV3OneBuild::kDEFAULT_FORMAT_COMBINATION_LIMIT == 100);
static_assert(std::is_same_v<decltype(DimsExprs::d[0]), IDimensionExpr const*&>);
static_assert(offsetof(DynamicPluginTensorDesc, desc) == 0 && sizeof(PluginFieldCollection) == 16);
static_assert(std::is_base_of_v<IPluginV2Ext, IPluginV2DynamicExt> && std::is_base_of_v<IPluginV2, IPluginV2Ext> &&
              std::is_base_of_v<IPluginCreatorInterface, IPluginCreator> &&
              std::is_base_of_v<IPluginCreatorInterface, IPluginCreatorV3One> &&
              std::is_base_of_v<IPluginCapability, IPluginV3OneCore> &&
              std::is_base_of_v<IPluginCapability, IPluginV3OneBuild> &&
              std::is_base_of_v<IPluginV3OneBuild, IPluginV3OneBuildV2> &&
              std::is_base_of_v<IPluginCapability, IPluginV3OneRuntime> &&
              std::is_base_of_v<IVersionedInterface, IPluginV3>);
// Overloaded (the implicit-batch forms are closed off privately): initializing a pointer of the exact type
// selects the public forms, and fails to compile if they differ.
[[maybe_unused]] constexpr DimsExprs (IPluginV2DynamicExt::*kDynOutputDimensions)(
    int32_t, DimsExprs const*, int32_t, IExprBuilder&) noexcept = &IPluginV2DynamicExt::getOutputDimensions;
static_assert(std::is_same_v<decltype(&IPluginV2DynamicExt::supportsFormatCombination),
                             bool (IPluginV2DynamicExt::*)(int32_t, PluginTensorDesc const*, int32_t,
                                                           int32_t) noexcept>);
[[maybe_unused]] constexpr int32_t (IPluginV2DynamicExt::*kDynEnqueue)(PluginTensorDesc const*, PluginTensorDesc const*,
                                                                    void const* const*, void* const*, void*,
                                                                    cudaStream_t) noexcept = &IPluginV2DynamicExt::enqueue;
static_assert(std::is_same_v<decltype(&IPluginV2Ext::attachToContext),
                             void (IPluginV2Ext::*)(cudnnContext*, cublasContext*, IGpuAllocator*) noexcept>);
static_assert(std::is_same_v<decltype(&IPluginCreator::deserializePlugin),
                             IPluginV2* (IPluginCreator::*)(AsciiChar const*, void const*, size_t) noexcept>);
static_assert(std::is_same_v<decltype(&IPluginCreatorV3One::createPlugin),
                             IPluginV3* (IPluginCreatorV3One::*)(AsciiChar const*, PluginFieldCollection const*,
                                                                 TensorRTPhase) noexcept>);
static_assert(std::is_same_v<decltype(&IPluginV3OneBuild::getOutputShapes),
                             int32_t (IPluginV3OneBuild::*)(DimsExprs const*, int32_t, DimsExprs const*, int32_t,
                                                            DimsExprs*, int32_t, IExprBuilder&) noexcept>);
static_assert(std::is_same_v<decltype(&IPluginV3OneRuntime::attachToContext),
                             IPluginV3* (IPluginV3OneRuntime::*)(IPluginResourceContext*) noexcept>);
static_assert(std::is_same_v<decltype(&IPluginRegistry::getAllCreators),
                             IPluginCreatorInterface* const* (IPluginRegistry::*)(int32_t* const) const noexcept>);
static_assert(std::is_same_v<decltype(&IPluginRegistry::loadLibrary),
                             IPluginRegistry::PluginLibraryHandle (IPluginRegistry::*)(AsciiChar const*) noexcept>);
static_assert(std::is_same_v<decltype(&IExprBuilder::constant),
                             IDimensionExpr const* (IExprBuilder::*)(int64_t) noexcept>);
static_assert(std::is_same_v<decltype(&getPluginRegistry), IPluginRegistry* (*)() noexcept>);

TEST(HeadersCompileTest, PluginHeaderCompilesAsCxx17) {
  EXPECT_STREQ(kilnPluginHeaderCxx17Kind(), "PLUGIN CREATOR_V1");
}

TEST(HeadersCompileTest, PluginFieldDefaults) {
  PluginField empty;
  EXPECT_EQ(empty.name, nullptr);
  EXPECT_EQ(empty.data, nullptr);
  EXPECT_EQ(empty.type, PluginFieldType::kUNKNOWN);
  EXPECT_EQ(empty.length, 0);
  PluginFieldCollection fc;
  EXPECT_EQ(fc.nbFields, 0);
  EXPECT_EQ(fc.fields, nullptr);
}

//
// User implementations of the callback interfaces.
//

class CountingLogger : public ILogger {
 public:
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    lastSeverity = severity;
    lastMessage = msg;
    ++count;
  }
  Severity lastSeverity = Severity::kVERBOSE;
  std::string lastMessage;
  int count = 0;
};

class RecordingProfiler : public IProfiler {
 public:
  void reportLayerTime(char const* layerName, float ms) noexcept override {
    names.emplace_back(layerName);
    total += ms;
  }
  std::vector<std::string> names;
  float total = 0.0F;
};

// Host-memory stand-in: enough to check the default forwarding of the asynchronous methods.
class MallocAllocator : public IGpuAllocator {
 public:
  void* allocate(uint64_t const size, uint64_t const alignment,
                 AllocatorFlags const flags) noexcept override {
    (void)alignment;
    lastFlags = flags;
    ++allocations;
    return size == 0 ? nullptr : std::malloc(static_cast<size_t>(size));
  }
  bool deallocate(void* const memory) noexcept override {
    ++deallocations;
    std::free(memory);
    return true;
  }
  int allocations = 0;
  int deallocations = 0;
  AllocatorFlags lastFlags = 0;
};

class SimpleErrorRecorder : public IErrorRecorder {
 public:
  int32_t getNbErrors() const noexcept override { return static_cast<int32_t>(errors_.size()); }
  ErrorCode getErrorCode(int32_t errorIdx) const noexcept override {
    return inRange(errorIdx) ? errors_[static_cast<size_t>(errorIdx)].first : ErrorCode::kUNSPECIFIED_ERROR;
  }
  ErrorDesc getErrorDesc(int32_t errorIdx) const noexcept override {
    return inRange(errorIdx) ? errors_[static_cast<size_t>(errorIdx)].second.c_str() : "";
  }
  bool hasOverflowed() const noexcept override { return false; }
  void clear() noexcept override { errors_.clear(); }
  bool reportError(ErrorCode val, ErrorDesc desc) noexcept override {
    errors_.emplace_back(val, desc);
    return val == ErrorCode::kINTERNAL_ERROR;
  }
  RefCount incRefCount() noexcept override { return ++refs_; }
  RefCount decRefCount() noexcept override { return --refs_; }

 private:
  bool inRange(int32_t i) const { return i >= 0 && i < getNbErrors(); }
  std::vector<std::pair<ErrorCode, std::string>> errors_;
  RefCount refs_ = 0;
};

class CancellingMonitor : public IProgressMonitor {
 public:
  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
    (void)phaseName;
    (void)parentPhase;
    steps = nbSteps;
  }
  bool stepComplete(char const* phaseName, int32_t step) noexcept override {
    (void)phaseName;
    return step < 1;
  }
  void phaseFinish(char const* phaseName) noexcept override { finished = phaseName; }
  int32_t steps = 0;
  std::string finished;
};

// A library-side implementation compiles too (what libkiln does for every interface).
class VectorHostMemory : public IHostMemory {
 public:
  explicit VectorHostMemory(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  void* data() const noexcept override {
    return bytes_.empty() ? nullptr : const_cast<uint8_t*>(bytes_.data());
  }
  std::size_t size() const noexcept override { return bytes_.size(); }
  DataType type() const noexcept override { return DataType::kUINT8; }

 private:
  std::vector<uint8_t> bytes_;
};

TEST(HeadersCompileTest, DimsHelpersFillAllEntries) {
  Dims4 n(1, 3, 224, 225);
  EXPECT_EQ(n.nbDims, 4);
  EXPECT_EQ(n.d[0], 1);
  EXPECT_EQ(n.d[3], 225);
  for (int32_t i = 4; i < Dims::MAX_DIMS; ++i) {
    EXPECT_EQ(n.d[i], 0);
  }
  Dims3 three;
  EXPECT_EQ(three.nbDims, 3);
  EXPECT_EQ(three.d[2], 0);
  DimsHW hw(7, 9);
  EXPECT_EQ(hw.nbDims, 2);
  EXPECT_EQ(hw.h(), 7);
  EXPECT_EQ(hw.w(), 9);
  hw.w() = 11;
  EXPECT_EQ(hw.d[1], 11);
  Dims sliced = n;  // Helpers convert to plain Dims.
  EXPECT_EQ(sliced.d[2], 224);
  Dims aggregate{2, {5, 6}};
  EXPECT_EQ(aggregate.d[1], 6);
  EXPECT_EQ(aggregate.d[7], 0);
}

TEST(HeadersCompileTest, EnumMaxMatchesTensorRt) {
  EXPECT_EQ(EnumMax<DataType>(), 12);
  EXPECT_EQ(EnumMax<LayerType>(), 57);
  EXPECT_EQ(EnumMax<BuilderFlag>(), 29);
  EXPECT_EQ(EnumMax<UnaryOperation>(), 25);
  EXPECT_EQ(EnumMax<TensorFormat>(), 13);
  // Flag sets fit in their 32-bit masks.
  EXPECT_LE(EnumMax<BuilderFlag>(), 32);
  EXPECT_LE(EnumMax<TacticSource>(), 32);
  EXPECT_LE(EnumMax<TensorFormat>(), 32);
}

TEST(HeadersCompileTest, FlagBitSets) {
  BuilderFlags flags = (1U << v(BuilderFlag::kFP16)) | (1U << v(BuilderFlag::kDISTRIBUTIVE_INDEPENDENCE));
  EXPECT_EQ(flags, 0x10000001U);
  TacticSources sources = 1U << v(TacticSource::kREFERENCE);
  EXPECT_EQ(sources, 0x80U);
  NetworkDefinitionCreationFlags network = 1U << v(NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
  EXPECT_EQ(network, 2U);
}

TEST(HeadersCompileTest, UserLogger) {
  CountingLogger logger;
  ILogger& base = logger;
  base.log(ILogger::Severity::kWARNING, "careful");
  EXPECT_EQ(logger.count, 1);
  EXPECT_EQ(logger.lastSeverity, ILogger::Severity::kWARNING);
  EXPECT_EQ(logger.lastMessage, "careful");
}

TEST(HeadersCompileTest, UserProfiler) {
  RecordingProfiler profiler;
  IProfiler& base = profiler;
  base.reportLayerTime("conv1", 1.5F);
  base.reportLayerTime("relu1", 0.25F);
  ASSERT_EQ(profiler.names.size(), 2U);
  EXPECT_EQ(profiler.names[1], "relu1");
  EXPECT_FLOAT_EQ(profiler.total, 1.75F);
}

TEST(HeadersCompileTest, UserGpuAllocatorDefaults) {
  MallocAllocator allocator;
  IGpuAllocator& base = allocator;
  EXPECT_STREQ(base.getInterfaceInfo().kind, "IGpuAllocator");
  EXPECT_EQ(base.getInterfaceInfo().major, 1);
  EXPECT_EQ(base.getInterfaceInfo().minor, 0);
  EXPECT_EQ(base.getAPILanguage(), APILanguage::kCPP);
  // allocateAsync/deallocateAsync default to the synchronous methods.
  void* p = base.allocateAsync(64, 0, 1U << v(AllocatorFlag::kRESIZABLE), nullptr);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(allocator.allocations, 1);
  EXPECT_EQ(allocator.lastFlags, 1U);
  // reallocate defaults to "not supported".
  EXPECT_EQ(base.reallocate(p, 0, 128), nullptr);
  EXPECT_TRUE(base.deallocateAsync(p, nullptr));
  EXPECT_EQ(allocator.deallocations, 1);
}

TEST(HeadersCompileTest, UserErrorRecorder) {
  SimpleErrorRecorder recorder;
  IErrorRecorder& base = recorder;
  EXPECT_STREQ(base.getInterfaceInfo().kind, "IErrorRecorder");
  EXPECT_EQ(base.incRefCount(), 1);
  EXPECT_FALSE(base.reportError(ErrorCode::kINVALID_ARGUMENT, "bad name"));
  EXPECT_TRUE(base.reportError(ErrorCode::kINTERNAL_ERROR, "broken"));
  EXPECT_EQ(base.getNbErrors(), 2);
  EXPECT_EQ(base.getErrorCode(0), ErrorCode::kINVALID_ARGUMENT);
  EXPECT_STREQ(base.getErrorDesc(1), "broken");
  EXPECT_EQ(base.getErrorCode(5), ErrorCode::kUNSPECIFIED_ERROR);
  EXPECT_STREQ(base.getErrorDesc(-1), "");
  base.clear();
  EXPECT_EQ(base.getNbErrors(), 0);
  EXPECT_FALSE(base.hasOverflowed());
  EXPECT_EQ(base.decRefCount(), 0);
}

TEST(HeadersCompileTest, UserProgressMonitor) {
  CancellingMonitor monitor;
  IProgressMonitor& base = monitor;
  EXPECT_STREQ(base.getInterfaceInfo().kind, "IProgressMonitor");
  base.phaseStart("build", nullptr, 3);
  EXPECT_TRUE(base.stepComplete("build", 0));
  EXPECT_FALSE(base.stepComplete("build", 1));
  base.phaseFinish("build");
  EXPECT_EQ(monitor.steps, 3);
  EXPECT_EQ(monitor.finished, "build");
}

TEST(HeadersCompileTest, LibraryInterfaceCanBeImplementedAndDeleted) {
  IHostMemory* memory = new VectorHostMemory({1, 2, 3});
  EXPECT_EQ(memory->size(), 3U);
  EXPECT_EQ(memory->type(), DataType::kUINT8);
  EXPECT_EQ(static_cast<uint8_t const*>(memory->data())[2], 3);
  EXPECT_NE(dynamic_cast<VectorHostMemory*>(memory), nullptr);
  delete memory;  // Public virtual destructor: owned objects are released with delete.
}

class RecordingOutputAllocator : public IOutputAllocator {
 public:
  void notifyShape(char const* tensorName, Dims const& dims) noexcept override {
    name = tensorName;
    shape = dims;
  }
  std::string name;
  Dims shape{};
};

TEST(HeadersCompileTest, UserOutputAllocatorDefaults) {
  RecordingOutputAllocator allocator;
  IOutputAllocator& base = allocator;
  EXPECT_STREQ(base.getInterfaceInfo().kind, "IOutputAllocator");
  EXPECT_EQ(base.getInterfaceInfo().major, 1);
  // The default reallocation refuses (nullptr), also through the stream-ordered entry point.
  EXPECT_EQ(base.reallocateOutputAsync("y", nullptr, 16, 256, nullptr), nullptr);
  base.notifyShape("y", Dims{2, {3, 4}});
  EXPECT_EQ(allocator.name, "y");
  EXPECT_EQ(allocator.shape.nbDims, 2);
  EXPECT_EQ(allocator.shape.d[1], 4);
}

}  // namespace
}  // namespace kiln
