"""medground.pipelines"""
